package io.simpleauth.config;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.springframework.beans.factory.DisposableBean;

/**
 * Runs a CPU-heavy part of a request on a small pool of platform threads, at most one per core, while the request
 * thread waits. Two pools, each its own bean: {@link SigningExecutor} (RS256/ES256/EdDSA signatures) and
 * {@link PasswordCheckExecutor} (argon2id).
 * <p>
 * Why pools: the request threads are sized for what may wait at once (pooled connections, admitted checks), not for
 * the cores. Run on them, the checks and signatures would share two cores between dozens of threads, each slowed by
 * all the others; here no more of them run than there are cores, the rest wait in a queue, first in first out, and
 * the request's pooled connection is back in the pool before they start. (On virtual threads, which the service ran
 * on until issue 23's flood test, the pools also kept the carriers free: virtual threads are not time-sliced.)
 * <p>
 * Why two pools: a login that has passed every check must not wait for a core behind argon2id checks (tens of
 * milliseconds each, far more when a flood of logins leaves them a small share of the CPU). With one pool, signing
 * could go ahead of queued checks but still waited for a running one to finish; apart, the kernel time-slices the
 * signing threads with the checking ones, as the akka stack's two dispatchers do.
 */
public class CpuBoundExecutor implements DisposableBean {

	private final ThreadPoolExecutor pool;

	protected CpuBoundExecutor(String name, int threads) {
		AtomicInteger n = new AtomicInteger();
		this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				r -> {
					Thread t = new Thread(r, name + "-" + n.incrementAndGet());
					t.setDaemon(true);
					return t;
				});
	}

	/** Runs {@code work} on the pool and returns its result; its RuntimeExceptions reach the caller as they are. */
	public <T> T call(Supplier<T> work) {
		Future<T> task = this.pool.submit(work::get);
		try {
			return task.get();
		}
		catch (InterruptedException ex) {
			task.cancel(true);
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while waiting for CPU-bound work", ex);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(ex.getCause());
		}
	}

	@Override
	public void destroy() {
		this.pool.shutdown();
	}

}

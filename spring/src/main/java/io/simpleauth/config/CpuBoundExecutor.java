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
 * Runs argon2id ({@link PasswordCheckExecutor}) on a small pool of platform threads while the request thread waits.
 * <p>
 * Why a pool: the request threads are sized for what may wait at once (pooled connections, admitted checks), not for
 * the cores or the heap. Run on them, the checks would share two cores between dozens of threads, each slowed by all
 * the others, and each would need its own 19 MiB working set; here no more of them run than the cores and the heap
 * allow, the rest wait in a queue, first in first out, and the request's pooled connection is back in the pool before
 * they start. A check takes tens of milliseconds, so the two hand-offs are a small part of it. The signatures (a
 * fraction of a millisecond) run on the request thread itself: a pool would cost them two hand-offs and buy nothing,
 * since that thread blocks on JDBC anyway and the kernel time-slices it with the check threads.
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

package io.simpleauth.config;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Runs the CPU-heavy part of a request (argon2id, RSA signatures) on a small pool of platform threads,
 * one per core, while the request's virtual thread waits unmounted.
 * <p>
 * Why: virtual threads are not time-sliced. If argon2 and RSA ran on the carrier threads, a virtual
 * thread whose query had just returned would queue for a carrier behind every signature in progress,
 * keeping its pooled connection checked out meanwhile; under load the other requests then wait past
 * DB_ACQUIRE_TIMEOUT_MS and get 503s although the database is idle. With the heavy work here, the
 * carriers stay free for short I/O continuations and a connection is held only for its query.
 */
@Component
public class CpuBoundExecutor implements DisposableBean {

	private final ExecutorService pool;

	public CpuBoundExecutor() {
		this(Runtime.getRuntime().availableProcessors());
	}

	CpuBoundExecutor(int threads) {
		AtomicInteger n = new AtomicInteger();
		this.pool = Executors.newFixedThreadPool(threads, r -> {
			Thread t = new Thread(r, "cpu-" + n.incrementAndGet());
			t.setDaemon(true);
			return t;
		});
	}

	/** Runs {@code work} on the pool and returns its result; its RuntimeExceptions reach the caller as they are. */
	public <T> T call(Supplier<T> work) {
		Future<T> future = this.pool.submit(work::get);
		try {
			return future.get();
		}
		catch (InterruptedException ex) {
			future.cancel(true);
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

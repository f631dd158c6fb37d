package io.simpleauth.config;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * <p>
 * Two priorities: {@link #callFirst} (signing a token pair, a millisecond or two, the last step of a request that
 * has passed every check) goes ahead of queued {@link #call} work (argon2id checks, tens of milliseconds each, at
 * most {@code MAX_PASSWORD_CHECKS} of them admitted), so that a flood of password checks does not hold up the
 * logins that have already succeeded; within a priority, first come first served.
 */
@Component
public class CpuBoundExecutor implements DisposableBean {

	private final ThreadPoolExecutor pool;

	private final AtomicLong sequence = new AtomicLong();

	public CpuBoundExecutor() {
		this(Runtime.getRuntime().availableProcessors());
	}

	CpuBoundExecutor(int threads) {
		AtomicInteger n = new AtomicInteger();
		this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new PriorityBlockingQueue<>(),
				r -> {
					Thread t = new Thread(r, "cpu-" + n.incrementAndGet());
					t.setDaemon(true);
					return t;
				});
	}

	/** Runs {@code work} on the pool and returns its result; its RuntimeExceptions reach the caller as they are. */
	public <T> T call(Supplier<T> work) {
		return run(work, Task.NORMAL);
	}

	/** As {@link #call}, ahead of every queued {@link #call}. */
	public <T> T callFirst(Supplier<T> work) {
		return run(work, Task.FIRST);
	}

	private <T> T run(Supplier<T> work, int priority) {
		Task<T> task = new Task<>(work, priority, this.sequence.getAndIncrement());
		this.pool.execute(task);
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

	/** A queued piece of work, ordered by priority, then by arrival. */
	private static final class Task<T> extends FutureTask<T> implements Comparable<Task<?>> {

		static final int FIRST = 0;

		static final int NORMAL = 1;

		private final int priority;

		private final long sequence;

		Task(Supplier<T> work, int priority, long sequence) {
			super(work::get);
			this.priority = priority;
			this.sequence = sequence;
		}

		@Override
		public int compareTo(Task<?> other) {
			int byPriority = Integer.compare(this.priority, other.priority);
			return byPriority != 0 ? byPriority : Long.compare(this.sequence, other.sequence);
		}

	}

}

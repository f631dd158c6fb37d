package io.simpleauth.config;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CpuBoundExecutorTest {

	private final CpuBoundExecutor cpu = new CpuBoundExecutor(1);

	@Test
	void aVirtualThreadsWorkRunsOnAPlatformThread() throws Exception {
		String[] seen = new String[1];
		Thread virtual = Thread.ofVirtual().start(() -> seen[0] = this.cpu.call(() -> Thread.currentThread().isVirtual() + ""));
		virtual.join();
		assertThat(seen[0]).isEqualTo("false");
		this.cpu.destroy();
	}

	@Test
	void runtimeExceptionsReachTheCallerUnwrapped() {
		IllegalArgumentException failure = new IllegalArgumentException("refused");
		assertThatThrownBy(() -> this.cpu.call(() -> {
			throw failure;
		})).isSameAs(failure);
		this.cpu.destroy();
	}

	@Test
	void callFirstGoesAheadOfQueuedWorkAndEachPriorityIsFirstComeFirstServed() throws Exception {
		CountDownLatch busy = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		List<String> order = new CopyOnWriteArrayList<>();
		List<Thread> callers = new ArrayList<>();
		callers.add(Thread.ofVirtual().start(() -> this.cpu.call(() -> {
			busy.countDown();
			await(release);
			return null;
		})));
		busy.await();
		for (String name : new String[] { "check-1", "check-2", "sign-1", "sign-2" }) {
			callers.add(Thread.ofVirtual().start(() -> {
				Supplier<Object> work = () -> order.add(name);
				if (name.startsWith("sign")) {
					this.cpu.callFirst(work);
				}
				else {
					this.cpu.call(work);
				}
			}));
			Thread.sleep(50); // queued one after the other
		}
		release.countDown();
		for (Thread caller : callers) {
			caller.join();
		}
		assertThat(order).containsExactly("sign-1", "sign-2", "check-1", "check-2");
		this.cpu.destroy();
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

package io.simpleauth.config;

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

}

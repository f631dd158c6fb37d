package io.simpleauth.config;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CpuBoundExecutorTest {

	private final PasswordCheckExecutor passwordChecks = new PasswordCheckExecutor(1);

	@AfterEach
	void stop() {
		this.passwordChecks.destroy();
	}

	@Test
	void aVirtualThreadsWorkRunsOnAPlatformThreadOfItsPool() throws Exception {
		String[] seen = new String[2];
		Thread virtual = Thread.ofVirtual().start(() -> {
			seen[0] = this.passwordChecks.call(() -> Thread.currentThread().isVirtual() + " " + Thread.currentThread().getName());
			seen[1] = this.passwordChecks.call(() -> Thread.currentThread().getName());
		});
		virtual.join();
		assertThat(seen).containsExactly("false password-1", "password-1");
	}

	@Test
	void runtimeExceptionsReachTheCallerUnwrapped() {
		IllegalArgumentException failure = new IllegalArgumentException("refused");
		assertThatThrownBy(() -> this.passwordChecks.call(() -> {
			throw failure;
		})).isSameAs(failure);
	}

}

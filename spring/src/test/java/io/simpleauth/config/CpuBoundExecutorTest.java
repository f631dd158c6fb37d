package io.simpleauth.config;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CpuBoundExecutorTest {

	private final SigningExecutor signing = new SigningExecutor(1);

	private final PasswordCheckExecutor passwordChecks = new PasswordCheckExecutor(1);

	@AfterEach
	void stop() {
		this.signing.destroy();
		this.passwordChecks.destroy();
	}

	@Test
	void aVirtualThreadsWorkRunsOnAPlatformThreadOfItsPool() throws Exception {
		String[] seen = new String[2];
		Thread virtual = Thread.ofVirtual().start(() -> {
			seen[0] = this.signing.call(() -> Thread.currentThread().isVirtual() + " " + Thread.currentThread().getName());
			seen[1] = this.passwordChecks.call(() -> Thread.currentThread().getName());
		});
		virtual.join();
		assertThat(seen).containsExactly("false signing-1", "password-1");
	}

	@Test
	void runtimeExceptionsReachTheCallerUnwrapped() {
		IllegalArgumentException failure = new IllegalArgumentException("refused");
		assertThatThrownBy(() -> this.signing.call(() -> {
			throw failure;
		})).isSameAs(failure);
	}

	@Test
	void signingDoesNotWaitForARunningPasswordCheck() throws Exception {
		CountDownLatch checking = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Thread check = Thread.ofVirtual().start(() -> this.passwordChecks.call(() -> {
			checking.countDown();
			await(release);
			return null;
		}));
		assertThat(checking.await(10, TimeUnit.SECONDS)).isTrue();
		// The only password-check thread is busy; signing has threads of its own.
		assertThat(this.signing.call(() -> "signed")).isEqualTo("signed");
		release.countDown();
		check.join();
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

package io.simpleauth.config;

import io.simpleauth.password.Argon2Memory;

import org.springframework.stereotype.Component;

/**
 * argon2id checks ({@code password-N}): as many threads as checks may run at once, one per core at most and one per
 * 19 MiB working set the heap holds ({@link Argon2Memory#checksAtOnce()}: one with the project's 96 MiB heap); at
 * most {@code MAX_PASSWORD_CHECKS} admitted, running or queued here ({@link io.simpleauth.limits.PasswordCheckLimit}).
 * See {@link CpuBoundExecutor}.
 */
@Component
public class PasswordCheckExecutor extends CpuBoundExecutor {

	public PasswordCheckExecutor() {
		this(Argon2Memory.checksAtOnce());
	}

	PasswordCheckExecutor(int threads) {
		super("password", threads);
	}

}

package io.simpleauth.config;

import org.springframework.stereotype.Component;

/**
 * argon2id checks, one platform thread per core ({@code password-N}), so at most that many 19 MiB blocks at a time;
 * at most {@code MAX_PASSWORD_CHECKS} admitted, running or queued here ({@link io.simpleauth.limits.PasswordCheckLimit}).
 * See {@link CpuBoundExecutor}.
 */
@Component
public class PasswordCheckExecutor extends CpuBoundExecutor {

	public PasswordCheckExecutor() {
		this(Runtime.getRuntime().availableProcessors());
	}

	PasswordCheckExecutor(int threads) {
		super("password", threads);
	}

}

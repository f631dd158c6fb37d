package io.simpleauth.config;

import org.springframework.stereotype.Component;

/** Signing token pairs, one platform thread per core ({@code signing-N}); see {@link CpuBoundExecutor}. */
@Component
public class SigningExecutor extends CpuBoundExecutor {

	public SigningExecutor() {
		this(Runtime.getRuntime().availableProcessors());
	}

	SigningExecutor(int threads) {
		super("signing", threads);
	}

}

package io.simpleauth.token;

import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.simpleauth.config.CpuBoundExecutor;
import io.simpleauth.password.PasswordVerifier;
import io.simpleauth.user.User;
import io.simpleauth.user.UserRepository;
import io.simpleauth.web.OAuthException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Service;

/** The password grant: look the user up, verify the password, sign the token pair. */
@Service
public class TokenService {

	private static final Logger log = LoggerFactory.getLogger(TokenService.class);

	/** Users whose unusable hash was already reported, so a data error is logged once, not per login. */
	private static final int MAX_REPORTED = 10_000;

	private final Set<UUID> reportedMalformed = ConcurrentHashMap.newKeySet();

	private final UserRepository users;

	private final PasswordVerifier passwords;

	private final TokenSigner signer;

	private final CpuBoundExecutor cpu;

	public TokenService(UserRepository users, PasswordVerifier passwords, TokenSigner signer, CpuBoundExecutor cpu) {
		this.users = users;
		this.passwords = passwords;
		this.signer = signer;
		this.cpu = cpu;
	}

	public TokenResponse passwordGrant(TokenRequest request) {
		// The lookup runs on the request's virtual thread; the connection is back in the pool before the
		// password check and the signatures run on the CPU pool.
		Optional<User> found = this.users.findByEmail(request.username());
		return this.cpu.call(() -> verifyAndSign(found, request.password()));
	}

	private TokenResponse verifyAndSign(Optional<User> found, String password) {
		if (found.isEmpty()) {
			// Same cost as a wrong argon2id password: no user enumeration by timing.
			this.passwords.verifyDummy(password);
			throw OAuthException.invalidGrant();
		}
		User user = found.get();
		switch (this.passwords.verify(password, user.passwordHash())) {
			case MATCH -> {
				return this.signer.issue(user);
			}
			case MALFORMED -> {
				// Costs what an unknown user costs, so a disabled or broken account cannot be told apart by timing.
				this.passwords.padUnusable(password);
				if (this.reportedMalformed.size() < MAX_REPORTED && this.reportedMalformed.add(user.id())) {
					log.warn("data error: user {} has an unusable password_hash (unknown scheme or malformed); login refused",
							user.id());
				}
				throw OAuthException.invalidGrant();
			}
			default -> throw OAuthException.invalidGrant();
		}
	}

}

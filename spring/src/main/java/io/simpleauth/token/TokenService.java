package io.simpleauth.token;

import java.util.Optional;

import io.simpleauth.config.CpuBoundExecutor;
import io.simpleauth.config.Settings;
import io.simpleauth.password.PasswordVerifier;
import io.simpleauth.user.User;
import io.simpleauth.user.UserRepository;

import org.springframework.stereotype.Service;

/**
 * The password grant: look the user up, verify the password, issue the token pair — its access token naming the
 * request's {@code client_id}, else {@code DEFAULT_CLIENT_ID}.
 */
@Service
public class TokenService {

	private final UnusableHashLog unusableHashes = new UnusableHashLog();

	private final UserRepository users;

	private final PasswordVerifier passwords;

	private final TokenSigner signer;

	private final CpuBoundExecutor cpu;

	private final String defaultClientId;

	public TokenService(UserRepository users, PasswordVerifier passwords, TokenSigner signer, CpuBoundExecutor cpu,
			Settings settings) {
		this.users = users;
		this.passwords = passwords;
		this.signer = signer;
		this.cpu = cpu;
		this.defaultClientId = settings.defaultClientId();
	}

	/**
	 * The token pair, or empty when the credentials are refused: an unknown user, a wrong password and an unusable
	 * stored hash alike, each after one argon2id run. A database failure is thrown (see DatabaseErrors).
	 */
	public Optional<TokenPair> passwordGrant(TokenRequest request) {
		// The lookup runs on the request's virtual thread; the connection is back in the pool before the
		// password check and the signatures run on the CPU pool.
		Optional<User> found = this.users.findByEmail(request.username());
		String clientId = request.clientId() != null ? request.clientId() : this.defaultClientId;
		return this.cpu.call(() -> verifyAndIssue(found, request.password(), clientId));
	}

	private Optional<TokenPair> verifyAndIssue(Optional<User> found, String password, String clientId) {
		if (found.isEmpty()) {
			// Same cost as a wrong argon2id password: no user enumeration by timing.
			this.passwords.verifyUnknownUser(password);
			return Optional.empty();
		}
		User user = found.get();
		return switch (this.passwords.verify(password, user.passwordHash())) {
			case MATCH -> Optional.of(this.signer.issue(user, clientId));
			case MISMATCH -> Optional.empty();
			case UNUSABLE -> {
				// Costs what an unknown user costs, so a disabled or broken account cannot be told apart by timing.
				this.passwords.padUnusable(password);
				this.unusableHashes.report(user.id());
				yield Optional.empty();
			}
		};
	}

}

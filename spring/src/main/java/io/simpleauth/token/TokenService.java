package io.simpleauth.token;

import java.net.InetAddress;
import java.util.Optional;
import java.util.UUID;

import io.simpleauth.config.PasswordCheckExecutor;
import io.simpleauth.config.SigningExecutor;
import io.simpleauth.config.Settings;
import io.simpleauth.limits.AddressLimiter;
import io.simpleauth.limits.Overloaded;
import io.simpleauth.limits.PasswordCheckLimit;
import io.simpleauth.limits.TooManyFailedLogins;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.metrics.Metrics.Rejection;
import io.simpleauth.password.PasswordVerifier;
import io.simpleauth.password.Verification;
import io.simpleauth.user.Login;
import io.simpleauth.user.Session;
import io.simpleauth.user.SessionRepository;
import io.simpleauth.user.User;
import io.simpleauth.user.UserRepository;

import org.springframework.stereotype.Service;

/**
 * Both grants and revocation (spec/README §1, §7, §8). The password grant: the client address's limit, the user and
 * the username's lock in one lookup, the password checked — argon2id under the overload limit — then a new session
 * (its first refresh token) and the token pair, its access token naming the request's {@code client_id}, else
 * {@code DEFAULT_CLIENT_ID}. The refresh grant: the presented token rotated, the pair issued in its family.
 * <p>
 * Statements run on the request thread; argon2id and the signatures on pools of their own, with no connection
 * held meanwhile. A refused grant is an empty answer; a lock is {@link TooManyFailedLogins}, a shed argon2id check
 * {@link io.simpleauth.limits.Overloaded}, an unreachable database
 * {@link io.simpleauth.user.DatabaseUnavailableException}.
 */
@Service
public class TokenService {

	private final UnusableHashLog unusableHashes = new UnusableHashLog();

	private final UserRepository users;

	private final SessionRepository sessions;

	private final PasswordVerifier passwords;

	private final TokenSigner signer;

	private final SigningExecutor signing;

	private final PasswordCheckExecutor passwordChecks;

	private final AddressLimiter addresses;

	private final PasswordCheckLimit checks;

	private final Metrics metrics;

	private final String defaultClientId;

	public TokenService(UserRepository users, SessionRepository sessions, PasswordVerifier passwords, TokenSigner signer,
			SigningExecutor signing, PasswordCheckExecutor passwordChecks, AddressLimiter addresses, PasswordCheckLimit checks, Metrics metrics,
			Settings settings) {
		this.users = users;
		this.sessions = sessions;
		this.passwords = passwords;
		this.signer = signer;
		this.signing = signing;
		this.passwordChecks = passwordChecks;
		this.addresses = addresses;
		this.checks = checks;
		this.metrics = metrics;
		this.defaultClientId = settings.defaultClientId();
	}

	/**
	 * The password grant from {@code client} (null: not tracked): the tokens, or empty when the credentials are refused
	 * — an unknown user, a wrong password and an unusable stored hash alike, each after one argon2id run, each counted
	 * as a failure of the username and of the address.
	 */
	public Optional<GrantedTokens> passwordGrant(TokenRequest.Password request, InetAddress client) {
		this.addresses.check(client);
		Login login = this.users.findForLogin(request.username());
		if (login.locked()) {
			this.metrics.rejection(Rejection.USERNAME_LOCKED);
			throw new TooManyFailedLogins(login.lockedForSeconds());
		}
		Optional<User> found = login.user();
		if (!verified(found, request.password(), client)) {
			this.addresses.failed(client);
			this.users.countFailure(request.username());
			return Optional.empty();
		}
		User user = found.get();
		String clientId = request.clientId() != null ? request.clientId() : this.defaultClientId;
		UUID sid = UUID.randomUUID();
		String refreshToken = RefreshToken.generate();
		this.sessions.start(request.username(), RefreshToken.sha256(refreshToken), sid, user.id(), clientId);
		return Optional.of(new GrantedTokens(this.signing.call(() -> this.signer.issue(user, clientId, sid)),
				refreshToken));
	}

	/**
	 * The refresh grant: the new tokens in the presented token's family, or empty when it is refused — malformed
	 * (without asking the database), unknown, expired, used (its family then revoked: reuse), revoked, another client's,
	 * or its user's stored hash unusable (the family revoked).
	 */
	public Optional<GrantedTokens> refreshGrant(TokenRequest.Refresh request) {
		if (!RefreshToken.isWellFormed(request.refreshToken())) {
			return Optional.empty();
		}
		byte[] presented = RefreshToken.sha256(request.refreshToken());
		String next = RefreshToken.generate();
		Optional<Session> rotated = this.sessions.rotate(presented, request.clientId(), RefreshToken.sha256(next));
		if (rotated.isEmpty()) {
			if (this.sessions.revokeFamilyOfUsed(presented) > 0) {
				this.metrics.rejection(Rejection.REFRESH_REUSE);
			}
			return Optional.empty();
		}
		Session session = rotated.get();
		if (!this.passwords.isUsable(session.user().passwordHash())) {
			// A disabled (or broken) user: rotate has just marked the token used, so this revokes its family.
			this.sessions.revokeFamilyOfUsed(presented);
			return Optional.empty();
		}
		TokenPair pair = this.signing
			.call(() -> this.signer.issue(session.user(), session.clientId(), session.familyId()));
		return Optional.of(new GrantedTokens(pair, next));
	}

	/** POST /revoke: revokes the family of a well-formed token; any other value is not looked up. */
	public void revoke(String token) {
		if (RefreshToken.isWellFormed(token)) {
			this.sessions.revokeFamily(RefreshToken.sha256(token));
		}
	}

	/**
	 * Whether the password matches. The legacy HMAC (microseconds) runs here; every argon2id run — the stored hash, the
	 * unknown user's or the unusable hash's dummy — runs on the password-check pool under a permit of the overload
	 * limit, held while it waits for a thread and runs; without one the check is shed ({@link #acquireCheck}).
	 */
	private boolean verified(Optional<User> found, String password, InetAddress client) {
		if (found.isPresent() && this.passwords.isLegacy(found.get().passwordHash())) {
			return this.passwords.verify(password, found.get().passwordHash()) == Verification.MATCH;
		}
		try (PasswordCheckLimit.Permit permit = acquireCheck(client)) {
			return this.passwordChecks.call(() -> {
				try {
					return verifyArgon2id(found, password);
				}
				finally {
					// Given back by the pool thread as the check ends, not when this request's thread is next
					// scheduled (under a flood that can be later); the outer close is then a no-op.
					permit.close();
				}
			});
		}
	}

	/**
	 * A permit of the overload limit; when none is free the check is shed ({@link Overloaded}) and counted as a failure
	 * of the client's address, so that a flood of logins this instance cannot afford to check locks its address
	 * (spec/README §8). Not of the username: that would be a write per shed request.
	 */
	private PasswordCheckLimit.Permit acquireCheck(InetAddress client) {
		try {
			return this.checks.acquire();
		}
		catch (Overloaded ex) {
			this.addresses.failed(client);
			throw ex;
		}
	}

	private boolean verifyArgon2id(Optional<User> found, String password) {
		if (found.isEmpty()) {
			// Same cost as a wrong argon2id password: no user enumeration by timing.
			this.passwords.verifyUnknownUser(password);
			return false;
		}
		User user = found.get();
		return switch (this.passwords.verify(password, user.passwordHash())) {
			case MATCH -> true;
			case MISMATCH -> false;
			case UNUSABLE -> {
				// Costs what an unknown user costs, so a disabled or broken account cannot be told apart by timing.
				this.passwords.padUnusable(password);
				this.unusableHashes.report(user.id());
				yield false;
			}
		};
	}

}

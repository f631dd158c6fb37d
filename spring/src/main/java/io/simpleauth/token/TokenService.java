package io.simpleauth.token;

import java.net.InetAddress;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import io.simpleauth.config.PasswordCheckExecutor;
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
 * Both grants and revocation (spec/README §1, §7, §8). The password grant, in the contract's order (§8): one attempt
 * reserved for the client address, then one for the username with the user read in the same round trip (statement L),
 * the password checked — every argon2id run under the overload limit, a legacy mismatch paying a decoy argon2id — then
 * a new session (statement S, only if the hash is still the one verified) and the token pair, its access token naming
 * the request's {@code client_id}, else {@code DEFAULT_CLIENT_ID}. The reservations are the failure counts: given back
 * where the attempt turns out not to be a failure. The refresh grant: the presented token rotated, the pair issued in
 * its session.
 * <p>
 * Statements and the signatures run on the request thread; argon2id on a pool of its own, with no connection held
 * meanwhile. (A signature is a fraction of a millisecond of CPU on a thread that blocks on JDBC anyway: a pool of its
 * own would only add two hand-offs per grant.) A refused grant is an empty answer; a lock is {@link TooManyFailedLogins}, a shed argon2id check
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

	private final PasswordCheckExecutor passwordChecks;

	private final AddressLimiter addresses;

	private final PasswordCheckLimit checks;

	private final Metrics metrics;

	private final String defaultClientId;

	public TokenService(UserRepository users, SessionRepository sessions, PasswordVerifier passwords, TokenSigner signer,
			PasswordCheckExecutor passwordChecks, AddressLimiter addresses, PasswordCheckLimit checks, Metrics metrics,
			Settings settings) {
		this.users = users;
		this.sessions = sessions;
		this.passwords = passwords;
		this.signer = signer;
		this.passwordChecks = passwordChecks;
		this.addresses = addresses;
		this.checks = checks;
		this.metrics = metrics;
		this.defaultClientId = settings.defaultClientId();
	}

	/**
	 * The password grant from {@code client} (null: not tracked): the tokens, or empty when the credentials are refused
	 * — an unknown user, a wrong password, an unusable stored hash, or credentials changed since they were verified —
	 * each after one argon2id run, each left counted as a failure of the username and of the address.
	 */
	public Optional<GrantedTokens> passwordGrant(TokenRequest.Password request, InetAddress client) {
		AddressLimiter.Reservation address = this.addresses.reserve(client);
		Login login;
		try {
			login = this.users.reserveLogin(request.username());
		}
		catch (RuntimeException ex) {
			this.addresses.release(address);
			throw ex;
		}
		if (login.locked()) {
			this.addresses.release(address);
			this.metrics.rejection(Rejection.USERNAME_LOCKED);
			throw new TooManyFailedLogins(login.lockedForSeconds());
		}
		Optional<User> found = login.user();
		boolean matched;
		try {
			matched = verified(found, request.password());
		}
		catch (Overloaded ex) {
			// Shed: the username's reservation back (a write that may fail like any other: the 503 stands); the
			// address's stays, a shed grant counts for its address.
			giveBack(request.username());
			throw ex;
		}
		if (!matched) {
			return Optional.empty();
		}
		User user = found.get();
		String clientId = request.clientId() != null ? request.clientId() : this.defaultClientId;
		UUID sid = UUID.randomUUID();
		String refreshToken = RefreshToken.generate();
		if (!this.sessions.start(request.username(), RefreshToken.sha256(refreshToken), sid, user.id(), clientId,
				user.passwordHash())) {
			return Optional.empty(); // the hash changed since it was verified: as a wrong password
		}
		this.addresses.release(address);
		return Optional.of(new GrantedTokens(this.signer.issue(user, clientId, sid), refreshToken));
	}

	private void giveBack(String username) {
		try {
			this.users.giveBack(username);
		}
		catch (RuntimeException ex) {
			// Ignored (§8): the grant is answered 503 anyway, the reservation expires with its window.
		}
	}

	/**
	 * The refresh grant: the new tokens in the presented token's family, or empty when it is refused — malformed
	 * (without asking the database), unknown, expired, used (its session then revoked: reuse), its session revoked or
	 * ended, another client's, or its user's stored hash changed since the login (a reset, a disabled user).
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
		return Optional.of(new GrantedTokens(this.signer.issue(session.user(), session.clientId(), session.familyId()),
				next));
	}

	/** POST /revoke: revokes the family of a well-formed token; any other value is not looked up. */
	public void revoke(String token) {
		if (RefreshToken.isWellFormed(token)) {
			this.sessions.revokeFamily(RefreshToken.sha256(token));
		}
	}

	/**
	 * Whether the password matches. The legacy HMAC (microseconds) runs here, and needs no permit when it matches; every
	 * argon2id run — the stored hash, the unknown user's or the unusable hash's dummy, the decoy after a legacy mismatch
	 * (so that every wrong password costs one argon2id) — runs on the password-check pool under a permit of the
	 * overload limit, held while it waits for a thread and runs; without one the check is shed ({@link Overloaded}).
	 */
	private boolean verified(Optional<User> found, String password) {
		if (found.isPresent() && this.passwords.isLegacy(found.get().passwordHash())) {
			if (this.passwords.verify(password, found.get().passwordHash()) == Verification.MATCH) {
				return true;
			}
			underPermit(() -> {
				this.passwords.decoy(password);
				return false;
			});
			return false;
		}
		return underPermit(() -> verifyArgon2id(found, password));
	}

	private boolean underPermit(Supplier<Boolean> argon2id) {
		try (PasswordCheckLimit.Permit permit = this.checks.acquire()) {
			return this.passwordChecks.call(() -> {
				try {
					return argon2id.get();
				}
				finally {
					// Given back by the pool thread as the check ends, not when this request's thread is next
					// scheduled (under a flood that can be later); the outer close is then a no-op.
					permit.close();
				}
			});
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
				this.passwords.decoy(password);
				this.unusableHashes.report(user.id());
				yield false;
			}
		};
	}

}

package io.simpleauth.token;

import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.PasswordCheckExecutor;
import io.simpleauth.config.Settings;
import io.simpleauth.limits.AddressLimiter;
import io.simpleauth.limits.Overloaded;
import io.simpleauth.limits.PasswordCheckLimit;
import io.simpleauth.limits.TooManyFailedLogins;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.password.PasswordVerifier;
import io.simpleauth.user.DatabaseUnavailableException;
import io.simpleauth.user.Login;
import io.simpleauth.user.Session;
import io.simpleauth.user.SessionRepository;
import io.simpleauth.user.User;
import io.simpleauth.user.UserRepository;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mockito.ArgumentCaptor;
import org.mockito.InOrder;

import org.springframework.jdbc.CannotGetJdbcConnectionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.BDDMockito.willThrow;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.spy;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verifyNoInteractions;

/**
 * The grants: a password grant reserves an attempt for its address and its username, and passes the overload limit,
 * before a hash is computed; a match starts a session (if the hash is still the one verified) and is issued the signer's
 * pair in it; every refusal is empty, costs one argon2id run on the CPU pool, is counted once and stays counted as a
 * failure; the reservations are given back where spec/README §8 says. The refresh grant rotates and detects reuse;
 * revocation revokes the family of a well-formed token only.
 */
class TokenServiceTest {

	private static final String TOKEN = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final Metrics metrics = new Metrics(this.registry);

	private final Settings settings = Vectors.settings(Map.of("DEFAULT_CLIENT_ID", "default-app",
			"LOGIN_IP_MAX_FAILURES", "3", "MAX_PASSWORD_CHECKS", "2"));

	private final PasswordVerifier passwords = spy(new PasswordVerifier(this.metrics));

	private final UserRepository users = mock(UserRepository.class);

	private final SessionRepository sessions = mock(SessionRepository.class);

	private final TokenSigner signer = mock(TokenSigner.class);

	private final PasswordCheckExecutor passwordChecks = new PasswordCheckExecutor();

	private final AddressLimiter addresses = spy(new AddressLimiter(this.settings, this.metrics));

	private final PasswordCheckLimit checks = new PasswordCheckLimit(this.settings, this.metrics);

	private final TokenService service = new TokenService(this.users, this.sessions, this.passwords, this.signer,
			this.passwordChecks, this.addresses, this.checks, this.metrics, this.settings);

	private final InetAddress client = InetAddress.getLoopbackAddress();

	/** Threads the argon2id equaliser ran on, one entry per run. */
	private final List<String> dummyRuns = new CopyOnWriteArrayList<>();

	@BeforeEach
	void sessionsStart() {
		given(this.sessions.start(anyString(), any(), any(), any(), anyString(), anyString())).willReturn(true);
	}

	@AfterEach
	void stopPool() {
		this.passwordChecks.destroy();
	}

	// ------------------------------------------------------------------ the password grant: refusals

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "$disabled$2026-11-23T16:50:00Z", "$bcrypt$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL",
			"$argon2id$v=19$m=19456,t=2,p=1$short", "$hmac-sha256$not base64!$x", "" })
	void anUnusableHashCostsTheUnknownUsersArgon2idRunAndIsCountedOnce(String stored) {
		recordDummyRuns();
		found(user(stored));

		assertThat(grant("TopSecret0!")).isEmpty();

		then(this.passwords).should().decoy("TopSecret0!");
		assertThat(this.dummyRuns).hasSize(1).allMatch(thread -> thread.startsWith("password-"));
		assertThat(totalChecks()).isEqualTo(1);
		assertThat(checks("dummy", "mismatch")).isZero();
		assertThat(checks(stored.startsWith("$argon2id$") ? "argon2id"
				: stored.startsWith("$hmac-sha256$") ? "hmac-sha256" : "unknown", "unusable")).isEqualTo(1);
		then(this.users).should(never()).giveBack(anyString());
		then(this.addresses).should(never()).release(any());
		assertThat(this.checks.available()).as("the permit given back").isEqualTo(2);
	}

	@Test
	void anUnknownUserCostsTheSameArgon2idRunCountedAsTheDummy() {
		recordDummyRuns();
		given(this.users.reserveLogin(anyString())).willReturn(new Login(Optional.empty(), 0));

		assertThat(grant("TopSecret0!")).isEmpty();

		then(this.passwords).should().verifyUnknownUser("TopSecret0!");
		assertThat(this.dummyRuns).hasSize(1).allMatch(thread -> thread.startsWith("password-"));
		assertThat(totalChecks()).isEqualTo(1);
		assertThat(checks("dummy", "mismatch")).isEqualTo(1);
		then(this.users).should(never()).giveBack(anyString());
		then(this.addresses).should(never()).release(any());
		then(this.sessions).should(never()).start(anyString(), any(), any(), any(), anyString(), anyString());
	}

	@Test
	void aLegacyMismatchPaysTheDecoyArgon2idUnderAPermitCountedOnceAsTheMismatch() {
		found(user(JOHN_HASH));
		int[] permits = { -1 };
		doAnswer(call -> {
			this.dummyRuns.add(Thread.currentThread().getName());
			permits[0] = this.checks.available();
			return call.callRealMethod();
		}).when(this.passwords).decoy(anyString());

		assertThat(grant("wrong")).isEmpty();

		then(this.passwords).should().decoy("wrong");
		assertThat(this.dummyRuns).hasSize(1).allMatch(thread -> thread.startsWith("password-"));
		assertThat(permits[0]).as("one of two permits held during the decoy").isEqualTo(1);
		assertThat(checks("hmac-sha256", "mismatch")).isEqualTo(1);
		assertThat(totalChecks()).isEqualTo(1);
		then(this.users).should(never()).giveBack(anyString());
		assertThat(this.checks.available()).isEqualTo(2);
	}

	@Test
	void anArgon2idMismatchNeedsNoDecoy() {
		found(user(ARGON_HASH));

		assertThat(grant("wrong")).isEmpty();

		then(this.passwords).should(never()).decoy(anyString());
		then(this.passwords).should(never()).verifyUnknownUser(anyString());
		assertThat(checks("argon2id", "mismatch")).isEqualTo(1);
		assertThat(totalChecks()).isEqualTo(1);
	}

	@Test
	void everyFailureCountsForTheAddressUntilItIsLockedBeforeTheDatabaseIsAsked() throws Exception {
		found(user(JOHN_HASH));
		for (int i = 0; i < 3; i++) {
			assertThat(grant("wrong")).isEmpty();
		}
		assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOf(TooManyFailedLogins.class);
		then(this.users).should(times(3)).reserveLogin(anyString());
		assertThat(rejections("address_locked")).isEqualTo(1);
		assertThat(this.service.passwordGrant(new TokenRequest.Password("someone@example.com", "wrong"),
				InetAddress.getByAddress(new byte[] { 10, 0, 0, 1 })))
			.as("another address")
			.isEmpty();
	}

	@Test
	void aSuccessGivesItsAddressReservationBackButDoesNotClearTheFailures() {
		User john = user(JOHN_HASH);
		found(john);
		given(this.signer.issue(eq(john), anyString(), any(UUID.class))).willReturn(new TokenPair("a", "i", 600));
		grant("wrong");
		grant("wrong");
		for (int i = 0; i < 3; i++) {
			assertThat(grant("TopSecret0!")).as("success %d: not counted", i).isPresent();
		}
		grant("wrong");
		assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOf(TooManyFailedLogins.class);
	}

	@Test
	void credentialsChangedSinceTheyWereVerifiedAreAWrongPasswordAndStayCounted() {
		User john = user(JOHN_HASH);
		found(john);
		given(this.sessions.start(anyString(), any(), any(), any(), anyString(), anyString())).willReturn(false);
		for (int i = 0; i < 3; i++) {
			assertThat(grant("TopSecret0!")).isEmpty();
		}
		then(this.sessions).should(times(3))
			.start(eq("someone@example.com"), any(), any(), eq(john.id()), eq("default-app"), eq(JOHN_HASH));
		verifyNoInteractions(this.signer);
		then(this.addresses).should(never()).release(any());
		assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOf(TooManyFailedLogins.class);
	}

	@Test
	void thePasswordGrantRunsInTheContractsOrder() {
		User john = user(JOHN_HASH);
		found(john);
		given(this.signer.issue(eq(john), anyString(), any(UUID.class))).willReturn(new TokenPair("a", "i", 600));

		assertThat(grant("TopSecret0!")).isPresent();

		InOrder order = inOrder(this.addresses, this.users, this.passwords, this.sessions, this.signer);
		order.verify(this.addresses).reserve(this.client);
		order.verify(this.users).reserveLogin("someone@example.com");
		order.verify(this.passwords).verify("TopSecret0!", JOHN_HASH);
		order.verify(this.sessions).start(eq("someone@example.com"), any(), any(), eq(john.id()), eq("default-app"),
				eq(JOHN_HASH));
		order.verify(this.addresses).release(any());
		order.verify(this.signer).issue(eq(john), eq("default-app"), any(UUID.class));
	}

	@Test
	void aLockedUsernameIs429WithItsSecondsAndNoHashIsComputed() {
		given(this.users.reserveLogin(anyString())).willReturn(new Login(Optional.of(user(ARGON_HASH)), 42));

		assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOfSatisfying(TooManyFailedLogins.class,
				locked -> assertThat(locked.retryAfterSeconds()).isEqualTo(42));

		assertThat(totalChecks()).isZero();
		assertThat(rejections("username_locked")).isEqualTo(1);
		then(this.users).should(never()).giveBack(anyString());
		then(this.sessions).shouldHaveNoInteractions();
		for (int i = 0; i < 3; i++) {
			assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOf(TooManyFailedLogins.class);
		}
		assertThat(rejections("username_locked")).as("the address's reservations given back: never address_locked")
			.isEqualTo(4);
		assertThat(rejections("address_locked")).isZero();
	}

	@Test
	void aDatabaseErrorOnTheLookupGivesTheAddressReservationBack() {
		given(this.users.reserveLogin(anyString())).willThrow(unavailable());
		for (int i = 0; i < 4; i++) {
			assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOf(DatabaseUnavailableException.class);
		}
		assertThat(rejections("address_locked")).isZero();
	}

	@Test
	void withEveryPermitTakenAnArgon2idRunIsShedAtOnceItsUsernameReservationGivenBackItsAddresssKept()
			throws Exception {
		InetAddress other = InetAddress.getByAddress(new byte[] { 10, 0, 0, 2 });
		User john = user(JOHN_HASH);
		given(this.signer.issue(eq(john), anyString(), any(UUID.class))).willReturn(new TokenPair("a", "i", 600));
		found(user(ARGON_HASH));
		try (PasswordCheckLimit.Permit a = this.checks.acquire(); PasswordCheckLimit.Permit b = this.checks.acquire()) {
			assertThatThrownBy(() -> grant("argon-pass-1")).isInstanceOf(Overloaded.class);
			given(this.users.reserveLogin(anyString())).willReturn(new Login(Optional.empty(), 0));
			assertThatThrownBy(() -> grant("x")).as("the unknown user's dummy").isInstanceOf(Overloaded.class);
			found(user("$disabled$"));
			assertThatThrownBy(() -> grant("x")).as("the unusable hash's dummy").isInstanceOf(Overloaded.class);

			found(john);
			assertThatThrownBy(() -> grant("TopSecret0!")).as("three sheds lock the address (LOGIN_IP_MAX_FAILURES=3)")
				.isInstanceOf(TooManyFailedLogins.class);
			assertThatThrownBy(
					() -> this.service.passwordGrant(new TokenRequest.Password("someone@example.com", "wrong"), other))
				.as("a legacy mismatch's decoy needs a permit too; another address is not locked")
				.isInstanceOf(Overloaded.class);
			assertThat(this.service.passwordGrant(new TokenRequest.Password("someone@example.com", "TopSecret0!"), other))
				.as("a legacy match needs no permit")
				.isPresent();
		}
		assertThat(rejections("overload")).isEqualTo(4);
		assertThat(checks("argon2id", "mismatch") + checks("dummy", "mismatch") + checks("unknown", "unusable")).isZero();
		then(this.users).should(times(4)).giveBack("someone@example.com");
	}

	@Test
	void aShedWhoseReservationCannotBeGivenBackIsStillShed() {
		found(user(ARGON_HASH));
		willThrow(unavailable()).given(this.users).giveBack(anyString());
		try (PasswordCheckLimit.Permit a = this.checks.acquire(); PasswordCheckLimit.Permit b = this.checks.acquire()) {
			assertThatThrownBy(() -> grant("x")).isInstanceOf(Overloaded.class);
		}
	}

	@Test
	void anArgon2idCheckHoldsAPermitWhileItRunsAndGivesItBackAlsoWhenItFails() {
		given(this.users.reserveLogin(anyString())).willReturn(new Login(Optional.empty(), 0));
		int[] seen = new int[1];
		doAnswer(call -> {
			seen[0] = this.checks.available();
			throw new IllegalStateException("argon2 blew up");
		}).when(this.passwords).verifyUnknownUser(anyString());

		assertThatThrownBy(() -> grant("x")).hasMessage("argon2 blew up");

		assertThat(seen[0]).as("one of two permits held during the check").isEqualTo(1);
		assertThat(this.checks.available()).isEqualTo(2);
	}

	// ------------------------------------------------------------------ the password grant: success

	@Test
	void aMatchStartsASessionAndIsIssuedTheSignersPairInIt() {
		User john = user(JOHN_HASH);
		TokenPair pair = new TokenPair("access", "id", 600);
		found(john);
		given(this.signer.issue(eq(john), eq("default-app"), any(UUID.class))).willReturn(pair);

		GrantedTokens granted = grant("TopSecret0!").orElseThrow();

		assertThat(granted.pair()).isSameAs(pair);
		assertThat(RefreshToken.isWellFormed(granted.refreshToken())).isTrue();
		ArgumentCaptor<byte[]> hash = ArgumentCaptor.forClass(byte[].class);
		ArgumentCaptor<UUID> sid = ArgumentCaptor.forClass(UUID.class);
		InOrder order = inOrder(this.sessions, this.signer);
		order.verify(this.sessions)
			.start(eq("someone@example.com"), hash.capture(), sid.capture(), eq(john.id()), eq("default-app"),
					eq(JOHN_HASH));
		order.verify(this.signer).issue(john, "default-app", sid.getValue());
		assertThat(hash.getValue()).isEqualTo(RefreshToken.sha256(granted.refreshToken()));
		then(this.passwords).should(never()).decoy(anyString());
		then(this.passwords).should(never()).verifyUnknownUser(anyString());
		then(this.users).should(never()).giveBack(anyString());
		assertThat(checks("hmac-sha256", "match")).isEqualTo(1);
	}

	@Test
	void eachLoginIsANewSessionWithANewRefreshToken() {
		User john = user(JOHN_HASH);
		found(john);
		given(this.signer.issue(eq(john), anyString(), any(UUID.class))).willReturn(new TokenPair("a", "i", 600));
		String first = grant("TopSecret0!").orElseThrow().refreshToken();
		String second = grant("TopSecret0!").orElseThrow().refreshToken();
		assertThat(first).isNotEqualTo(second);
		ArgumentCaptor<UUID> sids = ArgumentCaptor.forClass(UUID.class);
		then(this.signer).should(times(2)).issue(eq(john), anyString(), sids.capture());
		assertThat(sids.getAllValues()).doesNotHaveDuplicates();
	}

	@Test
	void theRequestsClientIdWinsOverTheDefault() {
		User john = user(JOHN_HASH);
		TokenPair pair = new TokenPair("access", "id", 600);
		found(john);
		given(this.signer.issue(eq(john), eq("web"), any(UUID.class))).willReturn(pair);

		assertThat(this.service.passwordGrant(new TokenRequest.Password("someone@example.com", "TopSecret0!", "web"),
				this.client))
			.map(GrantedTokens::pair)
			.containsSame(pair);
		then(this.sessions).should().start(anyString(), any(), any(), any(), eq("web"), anyString());
	}

	@Test
	void aSessionThatCannotBeStoredIsNotSigned() {
		found(user(JOHN_HASH));
		willThrow(unavailable()).given(this.sessions).start(anyString(), any(), any(), any(), anyString(), anyString());
		assertThatThrownBy(() -> grant("TopSecret0!")).isInstanceOf(DatabaseUnavailableException.class);
		verifyNoInteractions(this.signer);
	}

	// ------------------------------------------------------------------ the refresh grant

	@ParameterizedTest
	@ValueSource(strings = { "short", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln" })
	void aMalformedRefreshTokenIsRefusedWithoutTheDatabase(String token) {
		assertThat(this.service.refreshGrant(new TokenRequest.Refresh(token, null))).isEmpty();
		verifyNoInteractions(this.sessions, this.users, this.signer);
	}

	@Test
	void aRotatedTokenIsIssuedAPairInItsFamilyForTheUserAsStoredNow() {
		User john = user(JOHN_HASH);
		UUID family = UUID.randomUUID();
		TokenPair pair = new TokenPair("access", "id", 600);
		given(this.sessions.rotate(any(), eq("web"), any())).willReturn(Optional.of(new Session(family, "web", john)));
		given(this.signer.issue(john, "web", family)).willReturn(pair);

		GrantedTokens granted = this.service.refreshGrant(new TokenRequest.Refresh(TOKEN, "web")).orElseThrow();

		assertThat(granted.pair()).isSameAs(pair);
		assertThat(granted.refreshToken()).isNotEqualTo(TOKEN);
		ArgumentCaptor<byte[]> presented = ArgumentCaptor.forClass(byte[].class);
		ArgumentCaptor<byte[]> next = ArgumentCaptor.forClass(byte[].class);
		then(this.sessions).should().rotate(presented.capture(), eq("web"), next.capture());
		assertThat(presented.getValue()).isEqualTo(RefreshToken.sha256(TOKEN));
		assertThat(next.getValue()).isEqualTo(RefreshToken.sha256(granted.refreshToken()));
		then(this.sessions).should(never()).revokeFamilyOfUsed(any());
		assertThat(totalChecks()).as("no password is checked").isZero();
	}

	@Test
	void theFamilysClientIdIsTheAccessTokensWhenTheRequestNamesNone() {
		User john = user(JOHN_HASH);
		UUID family = UUID.randomUUID();
		given(this.sessions.rotate(any(), isNull(), any())).willReturn(Optional.of(new Session(family, "mobile", john)));
		given(this.signer.issue(john, "mobile", family)).willReturn(new TokenPair("a", "i", 600));
		assertThat(this.service.refreshGrant(new TokenRequest.Refresh(TOKEN, null))).isPresent();
	}

	@Test
	void aTokenThatRotatesNothingAndWasUsedBeforeRevokesItsFamilyCountedAsReuse() {
		given(this.sessions.rotate(any(), any(), any())).willReturn(Optional.empty());
		given(this.sessions.revokeFamilyOfUsed(any())).willReturn(3);

		assertThat(this.service.refreshGrant(new TokenRequest.Refresh(TOKEN, null))).isEmpty();

		then(this.sessions).should().revokeFamilyOfUsed(RefreshToken.sha256(TOKEN));
		assertThat(rejections("refresh_reuse")).isEqualTo(1);
		verifyNoInteractions(this.signer);
	}

	@Test
	void anUnknownExpiredOrRevokedTokenRevokesNothingAndIsNotReuse() {
		given(this.sessions.rotate(any(), any(), any())).willReturn(Optional.empty());
		given(this.sessions.revokeFamilyOfUsed(any())).willReturn(0);

		assertThat(this.service.refreshGrant(new TokenRequest.Refresh(TOKEN, null))).isEmpty();

		assertThat(rejections("refresh_reuse")).isZero();
	}

	@Test
	void aRefreshWithTheDatabaseDownIsTheDatabasesFailure() {
		given(this.sessions.rotate(any(), any(), any())).willThrow(unavailable());
		assertThatThrownBy(() -> this.service.refreshGrant(new TokenRequest.Refresh(TOKEN, null)))
			.isInstanceOf(DatabaseUnavailableException.class);
	}

	// ------------------------------------------------------------------ revocation

	@Test
	void aWellFormedTokenHasItsFamilyRevoked() {
		this.service.revoke(TOKEN);
		then(this.sessions).should().revokeFamily(RefreshToken.sha256(TOKEN));
	}

	@ParameterizedTest
	@ValueSource(strings = { "x", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8A" })
	void anyOtherValueIsNotLookedUp(String token) {
		this.service.revoke(token);
		verifyNoInteractions(this.sessions);
	}

	// ------------------------------------------------------------------ helpers

	/** Lets the spy's equalisers run for real and notes the thread each ran on. */
	private void recordDummyRuns() {
		doAnswer(call -> {
			this.dummyRuns.add(Thread.currentThread().getName());
			return call.callRealMethod();
		}).when(this.passwords).decoy(anyString());
		doAnswer(call -> {
			this.dummyRuns.add(Thread.currentThread().getName());
			return call.callRealMethod();
		}).when(this.passwords).verifyUnknownUser(anyString());
	}

	private void found(User user) {
		given(this.users.reserveLogin(anyString())).willReturn(new Login(Optional.of(user), 0));
	}

	private Optional<GrantedTokens> grant(String password) {
		return this.service.passwordGrant(new TokenRequest.Password("someone@example.com", password), this.client);
	}

	private static User user(String storedHash) {
		return new User(UUID.randomUUID(), "someone", "Some One", "someone@example.com", storedHash);
	}

	private static DatabaseUnavailableException unavailable() {
		return new DatabaseUnavailableException(new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection"));
	}

	private double checks(String scheme, String result) {
		Counter counter = this.registry.find("simpleauth.password.checks").tag("scheme", scheme).tag("result", result).counter();
		return counter == null ? 0 : counter.count();
	}

	private double totalChecks() {
		return this.registry.find("simpleauth.password.checks").counters().stream().mapToDouble(Counter::count).sum();
	}

	private double rejections(String reason) {
		return this.registry.get("simpleauth.rejections").tag("reason", reason).counter().count();
	}

	/** John Doe's stored hash (sql/seed.sql), password TopSecret0!. */
	private static final String JOHN_HASH = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";

	/** A well-formed argon2id hash (the dummy's). */
	private static final String ARGON_HASH = "$argon2id$v=19$m=19456,t=2,p=1$llZU1m3Fzgp67ZAasfJmbA$J3nlExNT1ugbXYwJH23Rgcx/EphIA2I1yrTQMMXZJqs";

}

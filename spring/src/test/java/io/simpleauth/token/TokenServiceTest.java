package io.simpleauth.token;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.CpuBoundExecutor;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.password.PasswordVerifier;
import io.simpleauth.user.User;
import io.simpleauth.user.UserRepository;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.spy;

/** The login flow: a match is issued the signer's pair; every refusal is empty, costs one argon2id run on the CPU pool, is counted once. */
class TokenServiceTest {

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final PasswordVerifier passwords = spy(new PasswordVerifier(new Metrics(this.registry)));

	private final UserRepository users = mock(UserRepository.class);

	private final TokenSigner signer = mock(TokenSigner.class);

	private final CpuBoundExecutor cpu = new CpuBoundExecutor();

	private final TokenService service = new TokenService(this.users, this.passwords, this.signer, this.cpu,
			Vectors.settings(Map.of("DEFAULT_CLIENT_ID", "default-app")));

	/** Threads the argon2id equaliser ran on, one entry per run. */
	private final List<String> dummyRuns = new CopyOnWriteArrayList<>();

	@AfterEach
	void stopPool() {
		this.cpu.destroy();
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "$disabled$2026-11-23T16:50:00Z", "$bcrypt$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL",
			"$argon2id$v=19$m=19456,t=2,p=1$short", "$hmac-sha256$not base64!$x", "" })
	void anUnusableHashCostsTheUnknownUsersArgon2idRunAndIsCountedOnce(String stored) {
		recordDummyRuns();
		given(this.users.findByEmail(anyString())).willReturn(Optional.of(user(stored)));

		assertThat(grant("TopSecret0!")).isEmpty();

		then(this.passwords).should().padUnusable("TopSecret0!");
		assertThat(this.dummyRuns).hasSize(1).allMatch(thread -> thread.startsWith("cpu-"));
		assertThat(totalChecks()).isEqualTo(1);
		assertThat(checks("dummy", "mismatch")).isZero();
		assertThat(checks(stored.startsWith("$argon2id$") ? "argon2id"
				: stored.startsWith("$hmac-sha256$") ? "hmac-sha256" : "unknown", "unusable")).isEqualTo(1);
	}

	@Test
	void anUnknownUserCostsTheSameArgon2idRunCountedAsTheDummy() {
		recordDummyRuns();
		given(this.users.findByEmail(anyString())).willReturn(Optional.empty());

		assertThat(grant("TopSecret0!")).isEmpty();

		then(this.passwords).should().verifyUnknownUser("TopSecret0!");
		assertThat(this.dummyRuns).hasSize(1).allMatch(thread -> thread.startsWith("cpu-"));
		assertThat(totalChecks()).isEqualTo(1);
		assertThat(checks("dummy", "mismatch")).isEqualTo(1);
	}

	@Test
	void aWrongPasswordOfAUsableHashNeedsNoEqualiser() {
		given(this.users.findByEmail(anyString())).willReturn(Optional.of(user(JOHN_HASH)));

		assertThat(grant("wrong")).isEmpty();

		then(this.passwords).should(never()).padUnusable(anyString());
		then(this.passwords).should(never()).verifyUnknownUser(anyString());
		assertThat(checks("hmac-sha256", "mismatch")).isEqualTo(1);
		assertThat(totalChecks()).isEqualTo(1);
	}

	@Test
	void aMatchingPasswordIsIssuedTheSignersPair() {
		User john = user(JOHN_HASH);
		TokenPair pair = new TokenPair("access", "id", 600);
		given(this.users.findByEmail(anyString())).willReturn(Optional.of(john));
		given(this.signer.issue(john, "default-app")).willReturn(pair);

		assertThat(grant("TopSecret0!")).containsSame(pair);

		then(this.passwords).should(never()).padUnusable(anyString());
		then(this.passwords).should(never()).verifyUnknownUser(anyString());
		assertThat(checks("hmac-sha256", "match")).isEqualTo(1);
	}

	@Test
	void theRequestsClientIdWinsOverTheDefault() {
		User john = user(JOHN_HASH);
		TokenPair pair = new TokenPair("access", "id", 600);
		given(this.users.findByEmail(anyString())).willReturn(Optional.of(john));
		given(this.signer.issue(john, "web")).willReturn(pair);

		assertThat(this.service.passwordGrant(new TokenRequest("someone@example.com", "TopSecret0!", "web")))
			.containsSame(pair);
	}

	/** Lets the spy's equalisers run for real and notes the thread each ran on. */
	private void recordDummyRuns() {
		doAnswer(call -> {
			this.dummyRuns.add(Thread.currentThread().getName());
			return call.callRealMethod();
		}).when(this.passwords).padUnusable(anyString());
		doAnswer(call -> {
			this.dummyRuns.add(Thread.currentThread().getName());
			return call.callRealMethod();
		}).when(this.passwords).verifyUnknownUser(anyString());
	}

	private Optional<TokenPair> grant(String password) {
		return this.service.passwordGrant(new TokenRequest("someone@example.com", password));
	}

	private static User user(String storedHash) {
		return new User(UUID.randomUUID(), "someone", "Some One", "someone@example.com", storedHash);
	}

	private double checks(String scheme, String result) {
		Counter counter = this.registry.find("simpleauth.password.checks").tag("scheme", scheme).tag("result", result).counter();
		return counter == null ? 0 : counter.count();
	}

	private double totalChecks() {
		return this.registry.find("simpleauth.password.checks").counters().stream().mapToDouble(Counter::count).sum();
	}

	/** John Doe's stored hash (sql/seed.sql), password TopSecret0!. */
	private static final String JOHN_HASH = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";

}

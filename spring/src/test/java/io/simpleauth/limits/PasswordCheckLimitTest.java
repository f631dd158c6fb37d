package io.simpleauth.limits;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.metrics.Metrics;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The overload limit: permits taken and given back, also when the check fails; one more is refused at once. */
class PasswordCheckLimitTest {

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final PasswordCheckLimit limit = new PasswordCheckLimit(2, new Metrics(this.registry));

	@Test
	void permitsAreTakenAndGivenBack() {
		try (PasswordCheckLimit.Permit first = this.limit.acquire()) {
			assertThat(this.limit.available()).isEqualTo(1);
			try (PasswordCheckLimit.Permit second = this.limit.acquire()) {
				assertThat(this.limit.available()).isZero();
			}
			assertThat(this.limit.available()).isEqualTo(1);
		}
		assertThat(this.limit.available()).isEqualTo(2);
		assertThat(overload()).isZero();
	}

	@Test
	void oneMoreIsRefusedAtOnceAndCounted() {
		PasswordCheckLimit.Permit first = this.limit.acquire();
		PasswordCheckLimit.Permit second = this.limit.acquire();
		assertThatThrownBy(this.limit::acquire).isInstanceOf(Overloaded.class);
		assertThat(overload()).isEqualTo(1);
		first.close();
		this.limit.acquire().close();
		second.close();
		assertThat(this.limit.available()).isEqualTo(2);
	}

	@Test
	void aFailingCheckGivesItsPermitBack() {
		assertThatThrownBy(() -> {
			try (PasswordCheckLimit.Permit permit = this.limit.acquire()) {
				throw new IllegalStateException("argon2 blew up");
			}
		}).hasMessage("argon2 blew up");
		assertThat(this.limit.available()).isEqualTo(2);
	}

	@Test
	void closingTwiceGivesBackOnce() {
		PasswordCheckLimit.Permit permit = this.limit.acquire();
		permit.close();
		permit.close();
		assertThat(this.limit.available()).isEqualTo(2);
	}

	private double overload() {
		return this.registry.get("simpleauth.rejections").tag("reason", "overload").counter().count();
	}

}

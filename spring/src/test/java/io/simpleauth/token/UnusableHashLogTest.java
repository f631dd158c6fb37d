package io.simpleauth.token;

import java.util.UUID;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class UnusableHashLogTest {

	@Test
	void eachUserIsReportedAtWarnOnceThenAtDebug() {
		UnusableHashLog log = new UnusableHashLog();
		UUID a = UUID.randomUUID();
		UUID b = UUID.randomUUID();
		assertThat(log.report(a)).isTrue();
		assertThat(log.report(a)).isFalse();
		assertThat(log.report(b)).isTrue();
		assertThat(log.report(a)).isFalse();
		assertThat(log.report(b)).isFalse();
	}

	@Test
	void onceFullItRemembersNoMoreUsersAndReportsThemAtDebug() {
		UnusableHashLog log = new UnusableHashLog(2);
		UUID first = UUID.randomUUID();
		assertThat(log.report(first)).isTrue();
		assertThat(log.report(UUID.randomUUID())).isTrue();
		UUID third = UUID.randomUUID();
		assertThat(log.report(third)).isFalse();
		assertThat(log.report(third)).isFalse();
		assertThat(log.report(first)).as("still remembered").isFalse();
	}

	@Test
	void theServiceRemembersTenThousandUsers() {
		assertThat(UnusableHashLog.MAX_REMEMBERED).isEqualTo(10_000);
	}

}

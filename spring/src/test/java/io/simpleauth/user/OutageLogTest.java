package io.simpleauth.user;

import java.sql.SQLTransientConnectionException;

import org.junit.jupiter.api.Test;

import org.springframework.jdbc.CannotGetJdbcConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

class OutageLogTest {

	private final OutageLog outages = new OutageLog();

	private static final CannotGetJdbcConnectionException UNAVAILABLE = new CannotGetJdbcConnectionException(
			"Failed to obtain JDBC Connection", new SQLTransientConnectionException("Connection is not available"));

	@Test
	void anOutageIsOneLineWhenItStartsAndOneWhenItEnds() {
		assertThat(this.outages.succeeded()).as("no outage yet").isFalse();
		assertThat(this.outages.failed(UNAVAILABLE)).isTrue();
		assertThat(this.outages.failed(UNAVAILABLE)).isFalse();
		assertThat(this.outages.failed(UNAVAILABLE)).isFalse();
		assertThat(this.outages.succeeded()).isTrue();
		assertThat(this.outages.succeeded()).isFalse();
		assertThat(this.outages.failed(UNAVAILABLE)).as("the next outage").isTrue();
	}

}

package io.simpleauth.user;

import java.net.ConnectException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.simpleauth.config.DatabaseErrors;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.CannotGetJdbcConnectionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class OutageLogTest {

	private final AtomicLong clock = new AtomicLong(1_000_000_000L);

	private final OutageLog outages = new OutageLog(this.clock::get);

	/** HikariCP's timeout after a failed connection attempt: it carries that failure. */
	private static final CannotGetJdbcConnectionException UNAVAILABLE = new CannotGetJdbcConnectionException(
			"Failed to obtain JDBC Connection", new SQLTransientConnectionException("Connection is not available", "08001",
					new ConnectException("Connection refused")));

	/** HikariCP's timeout with every connection in use and no failed connection attempt behind it. */
	private static final CannotGetJdbcConnectionException BUSY = new CannotGetJdbcConnectionException(
			"Failed to obtain JDBC Connection",
			new SQLTransientConnectionException("Connection is not available, request timed out after 1000ms"));

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

	@Test
	void aBusyPoolIsOverloadNotAnOutage() {
		assertThat(DatabaseErrors.isBusy(BUSY)).isTrue();
		assertThat(DatabaseErrors.isBusy(UNAVAILABLE)).isFalse();
		assertThat(catchThrowable(() -> this.outages.run(() -> {
			throw BUSY;
		}))).isInstanceOf(DatabaseUnavailableException.class);
		assertThat(this.outages.succeeded()).as("no outage began").isFalse();
		assertThat(this.outages.busy(BUSY)).as("within the interval").isFalse();
		this.clock.addAndGet(TimeUnit.SECONDS.toNanos(OutageLog.BUSY_INTERVAL_SECONDS) + 1);
		assertThat(this.outages.busy(BUSY)).isTrue();
		assertThat(this.outages.failed(UNAVAILABLE)).as("an outage is still logged").isTrue();
	}

}

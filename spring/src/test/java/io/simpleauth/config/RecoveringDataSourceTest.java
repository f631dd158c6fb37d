package io.simpleauth.config;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;

/** Pool renewal after an outage, with mocked pools and a probe the test switches. */
class RecoveringDataSourceTest {

	private final HikariDataSource first = mock(HikariDataSource.class);

	private final HikariDataSource second = mock(HikariDataSource.class);

	private final Deque<HikariDataSource> pools = new ArrayDeque<>(List.of(this.first, this.second));

	private final AtomicBoolean databaseUp = new AtomicBoolean();

	private final AtomicInteger probes = new AtomicInteger();

	private final RecoveringDataSource dataSource = new RecoveringDataSource(this.pools::pop, () -> {
		this.probes.incrementAndGet();
		return this.databaseUp.get();
	});

	@Test
	void borrowsFromThePoolWithoutProbing() throws Exception {
		Connection connection = mock(Connection.class);
		given(this.first.getConnection()).willReturn(connection);
		assertThat(this.dataSource.getConnection()).isSameAs(connection);
		assertThat(this.dataSource.getConnection()).isSameAs(connection);
		assertThat(this.probes).hasValue(0);
	}

	@Test
	void afterAnOutageThePoolIsReplacedOnceTheDatabaseAnswersAgain() throws Exception {
		// HikariCP's timeout after failed connection attempts carries the last failure.
		given(this.first.getConnection()).willThrow(new SQLTransientConnectionException("Connection is not available",
				"08001", 0, new SQLException("Connection refused", "08001")));
		Connection connection = mock(Connection.class);
		given(this.second.getConnection()).willReturn(connection);

		assertThatThrownBy(this.dataSource::getConnection).as("starts the outage").isInstanceOf(SQLException.class);
		assertThat(this.probes).hasValue(0);
		assertThatThrownBy(this.dataSource::getConnection).as("probed: still down").isInstanceOf(SQLException.class);
		assertThat(this.probes).hasValue(1);
		assertThatThrownBy(this.dataSource::getConnection).as("within the interval").isInstanceOf(SQLException.class);
		assertThat(this.probes).as("at most one probe per interval").hasValue(1);

		this.databaseUp.set(true);
		Thread.sleep(RecoveringDataSource.PROBE_INTERVAL_MS + 50);
		assertThat(this.dataSource.getConnection()).isSameAs(connection);
		assertThat(this.probes).hasValue(2);
		verify(this.first, timeout(5000)).close();
		verify(this.second, never()).close();

		assertThat(this.dataSource.getConnection()).isSameAs(connection);
		assertThat(this.probes).as("no probing once renewed").hasValue(2);
	}

	/** Every connection in use: HikariCP's timeout has no cause. Renewing would close the connections in use. */
	@Test
	void aBusyPoolIsNoOutage() throws Exception {
		given(this.first.getConnection())
			.willThrow(new SQLTransientConnectionException("Connection is not available, request timed out after 1000ms"));
		assertThatThrownBy(this.dataSource::getConnection).isInstanceOf(SQLException.class);
		Thread.sleep(RecoveringDataSource.PROBE_INTERVAL_MS + 50);
		this.databaseUp.set(true);
		assertThatThrownBy(this.dataSource::getConnection).isInstanceOf(SQLException.class);
		assertThat(this.probes).hasValue(0);
		verify(this.first, never()).close();
	}

	@Test
	void otherFailuresAreNoOutage() throws Exception {
		given(this.first.getConnection()).willThrow(new SQLException("syntax error", "42601"));
		assertThatThrownBy(this.dataSource::getConnection).isInstanceOf(SQLException.class);
		assertThatThrownBy(this.dataSource::getConnection).isInstanceOf(SQLException.class);
		assertThat(this.probes).hasValue(0);
	}

}

package io.simpleauth.config;

import java.util.Map;

import com.zaxxer.hikari.HikariConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The pool's settings as HikariCP keeps them after its own validation (which resets or drops values it refuses). */
class DataSourceConfigTest {

	private static HikariConfig validated(Map<String, String> env) {
		HikariConfig config = DataSourceConfig.hikariConfig(Settings.fromEnvironment(env));
		config.validate();
		return config;
	}

	@Test
	void theContractsDefaults() {
		HikariConfig config = validated(Map.of());
		assertThat(config.getMaximumPoolSize()).isEqualTo(10);
		assertThat(config.getMaxLifetime()).isEqualTo(600_000);
		assertThat(config.getIdleTimeout()).isEqualTo(300_000);
		assertThat(config.getConnectionTimeout()).isEqualTo(1000);
	}

	@Test
	void theMinimumsTheContractAcceptsAreKeptByHikari() {
		HikariConfig config = validated(Map.of("DB_MAX_LIFETIME_SECONDS", "30", "DB_IDLE_TIMEOUT_SECONDS", "10"));
		assertThat(config.getMaxLifetime()).isEqualTo(30_000);
		assertThat(config.getIdleTimeout()).isEqualTo(10_000);
	}

	@Test
	void noConnectionIsKeptOpenSoIdleOnesRetireDownToNoneEvenWithAPoolOfOne() {
		// HikariCP retires idle connections only down to minimumIdle, and only when it is below the maximum.
		for (String size : new String[] { "1", "10" }) {
			HikariConfig config = validated(Map.of("DB_POOL_SIZE", size));
			assertThat(config.getMinimumIdle()).as(size).isZero().isLessThan(config.getMaximumPoolSize());
			assertThat(config.getIdleTimeout()).as(size).isEqualTo(300_000);
		}
	}

	@Test
	void anAcquireTimeoutBelowHikarisFloorIsRaisedToIt() {
		assertThat(validated(Map.of("DB_ACQUIRE_TIMEOUT_MS", "1")).getConnectionTimeout())
			.isEqualTo(DataSourceConfig.HIKARI_MIN_TIMEOUT_MS);
	}

}

package io.simpleauth.config;

import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The HikariCP pool, sized and timed by the contract's variables. Boot's DataSource auto-configuration
 * backs off for this bean; its JdbcClient is built on it.
 */
@Configuration(proxyBeanMethods = false)
public class DataSourceConfig {

	/** HikariCP refuses connection timeouts under 250 ms. */
	static final long HIKARI_MIN_TIMEOUT_MS = 250;

	@Bean(destroyMethod = "close")
	public RecoveringDataSource dataSource(Settings settings) {
		return new RecoveringDataSource(() -> new HikariDataSource(hikariConfig(settings)), settings.database(),
				settings.acquireTimeoutMs());
	}

	static HikariConfig hikariConfig(Settings settings) {
		DatabaseSettings db = settings.database();
		long acquireTimeout = Math.max(HIKARI_MIN_TIMEOUT_MS, settings.acquireTimeoutMs());
		HikariConfig config = new HikariConfig();
		config.setPoolName("simple-auth");
		config.setJdbcUrl(db.jdbcUrl());
		if (db.username() != null) {
			config.setUsername(db.username());
		}
		if (db.password() != null) {
			config.setPassword(db.password());
		}
		// At most DB_POOL_SIZE connections, the same in every stack, opened on demand like the other stacks' pools
		// (Hikari's default minimumIdle, the maximum, would open all of them at start and never retire an idle one).
		// With no minimum a connection idle for DB_IDLE_TIMEOUT_SECONDS is closed down to none (spec/README §5).
		// DB_MAX_LIFETIME_SECONDS: Hikari closes an older connection when it is returned or found idle, never one in
		// use; HikariCP 7 takes a random part of up to a quarter off each connection's lifetime, so that connections
		// opened together do not all retire together (older than the setting is never kept, as §5 asks).
		config.setMaximumPoolSize(settings.poolSize());
		config.setMinimumIdle(0);
		config.setIdleTimeout(TimeUnit.SECONDS.toMillis(settings.idleTimeoutSeconds()));
		config.setMaxLifetime(TimeUnit.SECONDS.toMillis(settings.maxLifetimeSeconds()));
		config.setConnectionTimeout(acquireTimeout);
		config.setValidationTimeout(Math.max(HIKARI_MIN_TIMEOUT_MS, Math.min(acquireTimeout, 1000)));
		// Start even when the database is down; the pool keeps trying and recovers by itself.
		config.setInitializationFailTimeout(-1);
		return config;
	}

}

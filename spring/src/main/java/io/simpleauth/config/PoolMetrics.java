package io.simpleauth.config;

import java.util.function.ToIntFunction;

import com.zaxxer.hikari.HikariPoolMXBean;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.stereotype.Component;

/**
 * The contract's pool gauges, read from HikariCP's own counters ({@link HikariPoolMXBean}) of whichever pool
 * {@link RecoveringDataSource} currently uses, at scrape time: {@code simpleauth_db_pool_connections{state}},
 * {@code simpleauth_db_pool_pending} (callers waiting for a connection) and {@code simpleauth_db_pool_max}.
 */
@Component
public class PoolMetrics implements MeterBinder {

	private final RecoveringDataSource dataSource;

	public PoolMetrics(RecoveringDataSource dataSource) {
		this.dataSource = dataSource;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		gauge(registry, "simpleauth.db.pool.connections", "Pooled connections in use (active) and idle",
				HikariPoolMXBean::getActiveConnections, "state", "active");
		gauge(registry, "simpleauth.db.pool.connections", "Pooled connections in use (active) and idle",
				HikariPoolMXBean::getIdleConnections, "state", "idle");
		gauge(registry, "simpleauth.db.pool.pending", "Callers waiting for a pooled connection",
				HikariPoolMXBean::getThreadsAwaitingConnection);
		Gauge.builder("simpleauth.db.pool.max", this.dataSource, RecoveringDataSource::maximumPoolSize)
			.description("Maximum pool size (DB_POOL_SIZE)")
			.register(registry);
	}

	private void gauge(MeterRegistry registry, String name, String description, ToIntFunction<HikariPoolMXBean> value,
			String... tags) {
		Gauge.builder(name, this.dataSource, ds -> {
			HikariPoolMXBean pool = ds.poolMXBean();
			return pool != null ? value.applyAsInt(pool) : 0;
		}).description(description).tags(tags).register(registry);
	}

}

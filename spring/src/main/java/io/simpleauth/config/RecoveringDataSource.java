package io.simpleauth.config;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * The HikariCP pool, renewable. HikariCP reconnects by itself, but while the database is away its connection adder
 * backs off, doubling up to 5 s between attempts (hard-coded), so after a 5 s outage service could come back up to
 * 5 s after the database did. Once a borrow has failed for lack of a database, the first caller at most every
 * {@value #PROBE_INTERVAL_MS} ms opens a plain connection outside the pool; when that succeeds, the pool is replaced
 * by a fresh one (which connects on its first borrow) and the old one, whose connections died with the database,
 * is closed in the background. The akka stack does the same.
 * <p>
 * A borrow that timed out because every connection was in use — the pool busy, not the database gone — is no
 * outage: HikariCP's timeout then carries no cause, while one that follows failed connection attempts carries the
 * last of them. Renewing a busy pool would close connections in use and start again from one connection, so a burst
 * of requests would keep the pool small and the 503s coming.
 */
public class RecoveringDataSource extends DelegatingDataSource implements AutoCloseable {

	static final long PROBE_INTERVAL_MS = 200;

	private final Supplier<HikariDataSource> pools;

	private final AtomicReference<HikariDataSource> current;

	/** Whether a plain connection to the database can be opened now (outside the pool). */
	private final BooleanSupplier reachable;

	private final AtomicBoolean outage = new AtomicBoolean();

	private final AtomicBoolean probing = new AtomicBoolean();

	private volatile long nextProbeNanos;

	public RecoveringDataSource(Supplier<HikariDataSource> pools, DatabaseSettings db, long timeoutMs) {
		this(pools, probe(db, timeoutMs));
	}

	RecoveringDataSource(Supplier<HikariDataSource> pools, BooleanSupplier reachable) {
		this.pools = pools;
		this.current = new AtomicReference<>(pools.get());
		this.reachable = reachable;
		setTargetDataSource(this.current.get());
	}

	@Override
	public Connection getConnection() throws SQLException {
		if (this.outage.get()) {
			renewIfDatabaseIsBack();
		}
		HikariDataSource pool = this.current.get();
		try {
			return pool.getConnection();
		}
		catch (SQLException ex) {
			// Not for waiters of a replaced pool, nor when the pool was only busy.
			if (DatabaseErrors.isUnavailable(ex) && !DatabaseErrors.isBusy(ex) && this.current.get() == pool) {
				this.outage.set(true);
			}
			throw ex;
		}
	}

	private void renewIfDatabaseIsBack() {
		long now = System.nanoTime();
		if (now - this.nextProbeNanos < 0 || !this.probing.compareAndSet(false, true)) {
			return;
		}
		try {
			this.nextProbeNanos = now + TimeUnit.MILLISECONDS.toNanos(PROBE_INTERVAL_MS);
			if (this.outage.get() && this.reachable.getAsBoolean()) {
				HikariDataSource old = this.current.getAndSet(this.pools.get());
				setTargetDataSource(this.current.get());
				this.outage.set(false);
				Thread.ofPlatform().daemon().name("simple-auth-pool-closer").start(old::close);
			}
		}
		finally {
			this.probing.set(false);
		}
	}

	/** A plain pgjdbc connection with the pool's credentials, timed out like a borrow. */
	private static BooleanSupplier probe(DatabaseSettings db, long timeoutMs) {
		Properties properties = new Properties();
		if (db.username() != null) {
			properties.setProperty("user", db.username());
		}
		if (db.password() != null) {
			properties.setProperty("password", db.password());
		}
		String seconds = Long.toString(Math.max(1, (timeoutMs + 999) / 1000));
		properties.setProperty("connectTimeout", seconds);
		properties.setProperty("loginTimeout", seconds);
		properties.setProperty("socketTimeout", seconds);
		String url = db.jdbcUrl();
		return () -> {
			try (Connection probe = DriverManager.getDriver(url).connect(url, properties)) {
				return probe != null && probe.isValid(1);
			}
			catch (SQLException | RuntimeException ex) {
				return false;
			}
		};
	}

	/** HikariCP's counters of the pool in use (for the pool gauges), or null before it has started. */
	public HikariPoolMXBean poolMXBean() {
		return this.current.get().getHikariPoolMXBean();
	}

	public int maximumPoolSize() {
		return this.current.get().getMaximumPoolSize();
	}

	@Override
	public void close() {
		this.current.get().close();
	}

}

package io.simpleauth.user;

import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/** {@code SELECT 1} on a pooled connection, answered within one second whatever the pool's acquire timeout. */
@Component
public class DatabaseHealth implements DisposableBean {

	static final long TIMEOUT_MS = 1000;

	private final DataSource dataSource;

	private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();

	public DatabaseHealth(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	public boolean isUp() {
		Future<Boolean> probe = this.executor.submit(this::selectOne);
		try {
			return probe.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			probe.cancel(true);
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (Exception ex) {
			return false;
		}
	}

	private boolean selectOne() throws Exception {
		try (Connection connection = this.dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.setQueryTimeout(1);
			statement.execute("SELECT 1");
			return true;
		}
	}

	@Override
	public void destroy() {
		this.executor.shutdownNow();
	}

}

package io.simpleauth.config;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessResourceException;

/** Tells "the database cannot be reached right now" (→ 503) from other data errors (→ 500). */
public final class DatabaseErrors {

	private DatabaseErrors() {
	}

	/**
	 * No pooled connection in time, a refused or broken connection, or a server shutting down: Spring's
	 * translated exceptions for those, or the JDBC/pgjdbc cause (SQLState 08 connection exception, 53
	 * insufficient resources, 57P operator intervention) wherever it sits in the chain.
	 */
	public static boolean isUnavailable(Throwable failure) {
		for (Throwable t = failure; t != null; t = t.getCause()) {
			if (t instanceof DataAccessResourceFailureException || t instanceof TransientDataAccessResourceException
					|| t instanceof QueryTimeoutException || t instanceof SQLTransientConnectionException
					|| t instanceof SQLNonTransientConnectionException || t instanceof java.net.ConnectException) {
				return true;
			}
			if (t instanceof SQLException sql && sql.getSQLState() != null) {
				String state = sql.getSQLState();
				if (state.startsWith("08") || state.startsWith("53") || state.startsWith("57P")) {
					return true;
				}
			}
			if (t.getCause() == t) {
				break;
			}
		}
		return false;
	}

	/**
	 * HikariCP's timeout of a pool whose connections were all in use, wherever it sits in the chain: no failed
	 * connection attempt behind it (HikariCP gives its timeout the last connection failure as cause and SQL state, if
	 * there was one). Overload, not an outage: the database is up.
	 */
	public static boolean isBusy(Throwable failure) {
		for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
			if (t instanceof SQLException sql) {
				return sql instanceof SQLTransientConnectionException && sql.getCause() == null && sql.getSQLState() == null;
			}
		}
		return false;
	}

	public static String rootCause(Throwable ex) {
		Throwable root = NestedExceptionUtils.getMostSpecificCause(ex);
		return root.getClass().getSimpleName() + ": " + root.getMessage();
	}

}

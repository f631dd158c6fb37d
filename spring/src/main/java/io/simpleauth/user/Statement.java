package io.simpleauth.user;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One SQL statement of spec/README §7, kept in the contract's text with its numbered parameters ({@code $1}, ...)
 * and run through JDBC, which numbers nothing: {@link #jdbc()} is the same text with each {@code $n} written
 * {@code ?}, and {@link #bind} lists the values in the order those {@code ?} appear, repeating a value where its
 * {@code $n} repeats. So the statement the driver sends is the contract's, parameter for parameter.
 */
final class Statement {

	private static final Pattern PARAMETER = Pattern.compile("\\$(\\d+)");

	private final String text;

	private final String jdbc;

	/** The {@code $n} of each {@code ?}, in order (1-based). */
	private final int[] order;

	private final int parameters;

	private Statement(String text) {
		this.text = text;
		Matcher matcher = PARAMETER.matcher(text);
		StringBuilder jdbc = new StringBuilder();
		List<Integer> order = new ArrayList<>();
		int highest = 0;
		while (matcher.find()) {
			int n = Integer.parseInt(matcher.group(1));
			order.add(n);
			highest = Math.max(highest, n);
			matcher.appendReplacement(jdbc, "?");
		}
		matcher.appendTail(jdbc);
		this.jdbc = jdbc.toString();
		this.order = order.stream().mapToInt(Integer::intValue).toArray();
		this.parameters = highest;
		for (int n = 1; n <= highest; n++) {
			if (!order.contains(n)) {
				throw new IllegalArgumentException("$" + n + " is not used in " + text);
			}
		}
	}

	static Statement of(String text) {
		return new Statement(text);
	}

	/** The contract's text, with {@code $n}. */
	String text() {
		return this.text;
	}

	/** The text JDBC prepares: each {@code $n} a {@code ?}. */
	String jdbc() {
		return this.jdbc;
	}

	/** {@code values[n - 1]} is {@code $n}'s; the values in the order of the {@code ?}. */
	Object[] bind(Object... values) {
		if (values.length != this.parameters) {
			throw new IllegalArgumentException("expected " + this.parameters + " values, got " + values.length);
		}
		Object[] bound = new Object[this.order.length];
		for (int i = 0; i < this.order.length; i++) {
			bound[i] = values[this.order[i] - 1];
		}
		return bound;
	}

}

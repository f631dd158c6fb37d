package io.simpleauth.metrics;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The rejections family: all four reasons exported at 0 from the start, each counted on its own; POST /token's answers by status. */
class MetricsTest {

	private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

	private final Metrics metrics = new Metrics(this.registry);

	@Test
	void everyRejectionReasonIsExportedFromZero() {
		assertThat(this.registry.scrape()).contains("# TYPE simpleauth_rejections_total counter",
				"simpleauth_rejections_total{reason=\"username_locked\"} 0.0",
				"simpleauth_rejections_total{reason=\"address_locked\"} 0.0",
				"simpleauth_rejections_total{reason=\"overload\"} 0.0",
				"simpleauth_rejections_total{reason=\"refresh_reuse\"} 0.0");
	}

	@Test
	void eachReasonCountsOnItsOwn() {
		this.metrics.rejection(Metrics.Rejection.OVERLOAD);
		this.metrics.rejection(Metrics.Rejection.OVERLOAD);
		this.metrics.rejection(Metrics.Rejection.REFRESH_REUSE);
		assertThat(this.registry.scrape()).contains("simpleauth_rejections_total{reason=\"overload\"} 2.0",
				"simpleauth_rejections_total{reason=\"refresh_reuse\"} 1.0",
				"simpleauth_rejections_total{reason=\"username_locked\"} 0.0");
	}

	@Test
	void aGrantAndAnErrorAreEachCountedInTheirOwnSeries() {
		this.metrics.expectTokenRequests(400, "invalid_grant");
		this.metrics.tokenRequest(200, Metrics.NO_ERROR, 1_000_000);
		this.metrics.tokenRequest(200, Metrics.NO_ERROR, 1_000_000);
		this.metrics.tokenRequest(400, "invalid_grant", 1_000_000);
		assertThat(this.registry.scrape()).contains(
				"simpleauth_token_requests_total{error=\"none\",status=\"200\"} 2.0",
				"simpleauth_token_requests_total{error=\"invalid_grant\",status=\"400\"} 1.0",
				"simpleauth_token_request_duration_seconds_count 3");
	}

}

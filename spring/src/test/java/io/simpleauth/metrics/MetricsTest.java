package io.simpleauth.metrics;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The rejections family: all four reasons exported at 0 from the start, each counted on its own. */
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

}

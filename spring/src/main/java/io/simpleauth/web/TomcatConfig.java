package io.simpleauth.web;

import java.net.InetAddress;
import java.net.UnknownHostException;

import io.simpleauth.config.Settings;
import io.simpleauth.config.SettingsException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardHost;
import org.apache.coyote.AbstractProtocol;

import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Tomcat settings beyond application.properties: its error answers, TRACE, and the metrics port's connector. */
@Configuration(proxyBeanMethods = false)
public class TomcatConfig {

	/** Threads of the metrics connector: a scrape now and then, never the service's load. */
	static final int METRICS_THREADS = 2;

	/**
	 * Tomcat refuses TRACE itself by default (405, its own Allow list, then an error dispatch), before any filter.
	 * Let it through to {@link MethodRulesFilter}, which answers TRACE like every other method: 405 on a route, 404
	 * elsewhere. Nothing ever echoes the request: the filter answers every TRACE before the servlet.
	 */
	@Bean
	TomcatConnectorCustomizer traceReachesTheMethodRules() {
		return connector -> connector.setAllowTrace(true);
	}

	/**
	 * Tomcat's own error answers (a request it cannot parse, one read as the shutdown began) in the contract's shape:
	 * {@link ContractErrorReportValve} in place of the host's HTML error report. The host adds the valve of this class
	 * when it starts, unless one is in its pipeline already.
	 */
	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> contractErrorReports() {
		return factory -> factory.addContextCustomizers(context -> {
			if (context.getParent() instanceof StandardHost host) {
				host.setErrorReportValveClass(ContractErrorReportValve.class.getName());
				host.getPipeline().addValve(new ContractErrorReportValve());
			}
		});
	}

	/**
	 * {@code HOST:METRICS_PORT} (spec/README §5): a second connector of the same Tomcat, on the same servlet context,
	 * so that {@code GET /metrics} there is Actuator's Prometheus endpoint exactly as it was; {@link MethodRulesFilter}
	 * lets only that through on this port and answers it 404 on the public one. Not Boot's management server: a child
	 * context with a Tomcat of its own and error pages of its own, for one endpoint. A port that cannot be bound stops
	 * the start as the public port does (Boot checks every connector started); shutdown closes both.
	 */
	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> metricsConnector(Settings settings) {
		return factory -> {
			Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
			connector.setPort(settings.metricsPort());
			connector.setThrowOnFailure(true);
			connector.setAllowTrace(true);
			if (connector.getProtocolHandler() instanceof AbstractProtocol<?> protocol) {
				protocol.setAddress(address(settings.host()));
				protocol.setMaxThreads(METRICS_THREADS);
				protocol.setMinSpareThreads(1);
			}
			factory.addAdditionalConnectors(connector);
		};
	}

	private static InetAddress address(String host) {
		try {
			return InetAddress.getByName(host);
		}
		catch (UnknownHostException ex) {
			throw new SettingsException("HOST cannot be resolved: " + host);
		}
	}

}

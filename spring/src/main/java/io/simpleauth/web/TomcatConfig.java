package io.simpleauth.web;

import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Tomcat connector settings beyond application.properties. */
@Configuration(proxyBeanMethods = false)
public class TomcatConfig {

	/**
	 * Tomcat refuses TRACE itself by default (405, its own Allow list, then an error dispatch), before any filter.
	 * Let it through to {@link MethodRulesFilter}, which answers TRACE like every other method: 405 on a route, 404
	 * elsewhere. Nothing ever echoes the request: the filter answers every TRACE before the servlet.
	 */
	@Bean
	TomcatConnectorCustomizer traceReachesTheMethodRules() {
		return connector -> connector.setAllowTrace(true);
	}

}

package io.simpleauth.web;

import tools.jackson.databind.json.JsonMapper;

/**
 * The service's JSON answers as bytes, so that they go out with a Content-Length. Spring MVC's Jackson converter
 * writes a body of unknown length and flushes it, which commits the response chunked: the answer then takes two writes
 * (the headers with the body as one chunk, then the last chunk) where the other stacks make one. The bodies are small
 * records; {@link org.springframework.http.converter.ByteArrayHttpMessageConverter} sets the length.
 */
final class Json {

	private Json() {
	}

	static byte[] bytes(Object body) {
		return JsonMapper.shared().writeValueAsBytes(body);
	}

}

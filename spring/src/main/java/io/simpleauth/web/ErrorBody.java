package io.simpleauth.web;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/** RFC 6749 §5.2 error body; {@code error_description} left out when null (404 is {"error":"not_found"}). */
@JsonPropertyOrder({ "error", "error_description" })
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ErrorBody(@JsonProperty("error") String error,
		@JsonProperty("error_description") String errorDescription) {

}

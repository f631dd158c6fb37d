package io.simpleauth.web;

import io.simpleauth.user.DatabaseHealth;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * GET /health (readiness: the database answers {@code SELECT 1} within a second) and GET /health/live (liveness:
 * the process serves; never touches the database), in the contract's shape.
 */
@RestController
public class HealthController {

	public record HealthStatus(String status) {
	}

	private static final HealthStatus UP = new HealthStatus("up");

	private static final HealthStatus DOWN = new HealthStatus("down");

	private final DatabaseHealth database;

	public HealthController(DatabaseHealth database) {
		this.database = database;
	}

	@GetMapping("/health")
	public ResponseEntity<HealthStatus> health() {
		boolean up = this.database.isUp();
		return answer(up ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE, up ? UP : DOWN);
	}

	@GetMapping("/health/live")
	public ResponseEntity<HealthStatus> live() {
		return answer(HttpStatus.OK, UP);
	}

	private static ResponseEntity<HealthStatus> answer(HttpStatus status, HealthStatus body) {
		return ResponseEntity.status(status)
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.body(body);
	}

}

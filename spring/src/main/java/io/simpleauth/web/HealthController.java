package io.simpleauth.web;

import io.simpleauth.user.DatabaseHealth;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** GET /health for load balancers: the contract's shape, not Actuator's. */
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
		return ResponseEntity.status(up ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE)
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.body(up ? UP : DOWN);
	}

}

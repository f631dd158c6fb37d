package io.simpleauth.token;

import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;

import io.simpleauth.Vectors;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/** spec/vectors.json {@code refresh_tokens}: the encoding of 32 bytes, the stored SHA-256, every malformed shape refused. */
class RefreshTokenTest {

	private static final HexFormat HEX = HexFormat.of();

	@Test
	void theValidVectorsEncodeTheirBytesAndHashToTheirSha256() {
		JsonNode valid = Vectors.json().get("refresh_tokens").get("valid");
		assertThat(valid.size()).isGreaterThanOrEqualTo(3);
		for (JsonNode vector : valid) {
			String token = vector.get("token").stringValue();
			assertThat(RefreshToken.encode(HEX.parseHex(vector.get("bytes_hex").stringValue()))).isEqualTo(token);
			assertThat(RefreshToken.isWellFormed(token)).as(token).isTrue();
			assertThat(HEX.formatHex(RefreshToken.sha256(token))).as(token)
				.isEqualTo(vector.get("sha256_hex").stringValue());
		}
	}

	@Test
	void everyMalformedVectorIsRefused() {
		JsonNode malformed = Vectors.json().get("refresh_tokens").get("malformed");
		assertThat(malformed.size()).isGreaterThanOrEqualTo(9);
		for (JsonNode vector : malformed) {
			assertThat(RefreshToken.isWellFormed(vector.get("token").stringValue())).as(vector.get("name").stringValue())
				.isFalse();
		}
	}

	@Test
	void nothingElseIsWellFormedEither() {
		assertThat(RefreshToken.isWellFormed(null)).isFalse();
		assertThat(RefreshToken.isWellFormed("")).isFalse();
		assertThat(RefreshToken.isWellFormed("A".repeat(42) + "\u0000")).isFalse();
		assertThat(RefreshToken.isWellFormed("A".repeat(42) + "\uff21")).as("a fullwidth letter").isFalse();
		assertThat(RefreshToken.isWellFormed("A".repeat(43))).isTrue();
		assertThat(RefreshToken.isWellFormed("-_09azAZ".repeat(5) + "abc")).isTrue();
	}

	@Test
	void generatedTokensAre43Base64urlCharactersAndFresh() {
		Set<String> seen = new HashSet<>();
		for (int i = 0; i < 1000; i++) {
			String token = RefreshToken.generate();
			assertThat(token).hasSize(43).matches("[A-Za-z0-9_-]{43}");
			assertThat(RefreshToken.isWellFormed(token)).isTrue();
			assertThat(RefreshToken.sha256(token)).hasSize(32);
			seen.add(token);
		}
		assertThat(seen).hasSize(1000);
	}

}

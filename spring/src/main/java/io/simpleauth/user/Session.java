package io.simpleauth.user;

import java.util.UUID;

/**
 * A refresh token's family as the rotate statement returns it (spec/README §7): the family (the tokens' {@code sid}),
 * the {@code client_id} it was issued to, and its user as the database has it now.
 */
public record Session(UUID familyId, String clientId, User user) {

}

-- Refresh rotation grace window (issue 12): a just-rotated refresh token presented again for a few
-- seconds (two tabs refreshing with one cookie) gets back the successor it was already given, instead
-- of revoking the family. Only hashes of tokens are stored, so the successor's raw value is kept
-- sealed: AES-GCM under a key derived (HKDF) from the rotated token, which only its holder has.
-- The ciphertext lives only as long as the window: every sign-in and refresh clears sealed successors
-- older than it, revocation clears the family's, and account erasure deletes the rows.
ALTER TABLE refresh_tokens ADD COLUMN successor_id TEXT;
ALTER TABLE refresh_tokens ADD COLUMN successor_sealed TEXT;
-- The clearing sweep reads only the few rows that still hold a sealed successor.
CREATE INDEX refresh_tokens_sealed ON refresh_tokens (rotated_at) WHERE successor_sealed IS NOT NULL;

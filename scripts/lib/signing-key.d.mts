/** A private EC P-256 JWK with a kid, as the JWT_PRIVATE_KEY secret holds it. */
export function generateSigningKey(): Promise<Record<string, string>>;

/**
 * Where an org's alert webhook may point. The Worker (and the BillingAccount's alarm) POSTs to this
 * URL from inside the platform, so a URL naming loopback, a private network or a cloud metadata
 * address would be a server-side request forgery path. Pure: it judges the URL as WHATWG `URL`
 * normalizes it (`http://2130706433/`, `0x7f.1` and `[::ffff:7f00:1]` all mean 127.0.0.1), which is
 * the form `fetch` connects to. A host name that resolves to a private address is not caught here
 * (no DNS in a pure check); call it again right before each delivery so a changed rule applies.
 *
 * `allowPrivate` is the `ALERT_WEBHOOK_ALLOW_PRIVATE` Worker var: a comma-separated list of
 * `host[:port]` entries that may be used over plain http and on private addresses (a host without a
 * port matches any port), or `*` for any. Empty in production; `pnpm dev` sets `*`; the workerd
 * tests allow exactly their webhook mailbox.
 */
export type WebhookUrlCheck = { ok: true } | { ok: false; reason: string };

const refuse = (reason: string): WebhookUrlCheck => ({ ok: false, reason });

const PRIVATE_ADDRESS = "must not point at a loopback, private, link-local or reserved address";

export function checkWebhookUrl(url: string, allowPrivate: string): WebhookUrlCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse("must be a valid URL");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return refuse("must use https");
  if (parsed.username !== "" || parsed.password !== "") {
    return refuse("must not contain a user name or password");
  }
  if (allowedPrivate(parsed, allowPrivate)) return { ok: true };
  if (parsed.protocol !== "https:") return refuse("must use https");

  const host = parsed.hostname;
  if (host.startsWith("[")) {
    const groups = ipv6Groups(host.slice(1, -1));
    return groups === null || reservedIpv6(groups) ? refuse(PRIVATE_ADDRESS) : { ok: true };
  }
  const ipv4 = ipv4Value(host);
  if (ipv4 !== null) return reservedIpv4(ipv4) ? refuse(PRIVATE_ADDRESS) : { ok: true };

  const name = host.replace(/\.+$/, "");
  if (!name.includes(".") && name !== "localhost") {
    return refuse("must name a public host (a domain name with a dot)");
  }
  if (LOCAL_NAMES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) {
    return refuse("must not point at a local or internal host name");
  }
  return { ok: true };
}

/** Names that only mean something inside a machine or a private network. */
const LOCAL_NAMES = ["localhost", "local", "internal", "localdomain", "home.arpa"];

const stripDots = (host: string) => host.replace(/\.+$/, "");

function allowedPrivate(url: URL, list: string): boolean {
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  for (const raw of list.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (entry === "*") return true;
    const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
    if (!match?.[1]) continue;
    let host: string;
    try {
      // Normalized like the URL it is compared with (127.1 is 127.0.0.1, names are lowercased).
      host = new URL(`http://${match[1]}`).hostname;
    } catch {
      continue;
    }
    if (stripDots(host) !== stripDots(url.hostname)) continue;
    if (match[2] === undefined || Number(match[2]) === port) return true;
  }
  return false;
}

/** A dotted-quad IPv4 address (the only form `URL` leaves in a hostname) as a 32-bit number. */
function ipv4Value(host: string): number | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!match) return null;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return null;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

const cidr4 = (a: number, b: number, c: number, d: number, bits: number) => ({
  base: ((a << 24) | (b << 16) | (c << 8) | d) >>> 0,
  bits,
});

/** IPv4 blocks that are not the public internet (RFC 6890 and friends); metadata is 169.254/16. */
const RESERVED_IPV4 = [
  cidr4(0, 0, 0, 0, 8), // "this network", 0.0.0.0 included
  cidr4(10, 0, 0, 0, 8),
  cidr4(100, 64, 0, 0, 10), // carrier-grade NAT (Alibaba's metadata is 100.100.100.200)
  cidr4(127, 0, 0, 0, 8),
  cidr4(169, 254, 0, 0, 16), // link-local: cloud metadata at 169.254.169.254
  cidr4(172, 16, 0, 0, 12),
  cidr4(192, 0, 0, 0, 24), // IETF protocol assignments (Oracle's metadata is 192.0.0.192)
  cidr4(192, 0, 2, 0, 24),
  cidr4(192, 88, 99, 0, 24),
  cidr4(192, 168, 0, 0, 16),
  cidr4(198, 18, 0, 0, 15),
  cidr4(198, 51, 100, 0, 24),
  cidr4(203, 0, 113, 0, 24),
  cidr4(224, 0, 0, 0, 4), // multicast
  cidr4(240, 0, 0, 0, 4), // reserved, and 255.255.255.255
];

function reservedIpv4(address: number): boolean {
  return RESERVED_IPV4.some(({ base, bits }) => {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return (address & mask) >>> 0 === base;
  });
}

/** The eight 16-bit groups of an IPv6 address as `URL` serializes it (compressed, lowercase hex). */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(missing).fill("0"), ...tail];
  if (!all.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return null;
  return all.map((group) => Number.parseInt(group, 16));
}

const embeddedIpv4 = (high: number, low: number) => high * 65536 + low;

function reservedIpv6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address inside.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return reservedIpv4(embeddedIpv4(g6, g7));
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return reservedIpv4(embeddedIpv4(g6, g7));
  }
  if (g0 === 0x2002) return reservedIpv4(embeddedIpv4(g1, g2)); // 6to4 embeds one too
  // Only global unicast (2000::/3) is the public internet: this refuses ::, ::1, the deprecated
  // IPv4-compatible ::/96, unique local fc00::/7 (AWS metadata is fd00:ec2::254), link-local
  // fe80::/10, site-local fec0::/10 and multicast ff00::/8.
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && g1 < 0x200) return true; // IETF protocol assignments, Teredo included
  if (g0 === 0x2001 && g1 === 0xdb8) return true; // documentation
  if (g0 === 0x3fff && g1 < 0x1000) return true; // documentation (RFC 9637)
  return false;
}

import { describe, expect, it } from "vitest";
import { checkWebhookUrl } from "./webhook-url.ts";

const reasonOf = (url: string, allow = "") => {
  const result = checkWebhookUrl(url, allow);
  return result.ok ? null : result.reason;
};

describe("checkWebhookUrl", () => {
  it("accepts public https URLs", () => {
    for (const url of [
      "https://hooks.example.com/parley",
      "https://hooks.example.com:8443/parley?x=1",
      "https://8.8.8.8/hook",
      "https://[2606:4700:4700::1111]/hook",
      "https://[::ffff:8.8.8.8]/hook",
      "https://hooks.example.com./trailing-dot",
      "https://bücher.example/idn",
    ]) {
      expect(reasonOf(url), url).toBeNull();
    }
  });

  it("refuses plain http, other schemes, credentials and junk", () => {
    expect(reasonOf("http://hooks.example.com/parley")).toBe("must use https");
    expect(reasonOf("ftp://hooks.example.com/")).toBe("must use https");
    expect(reasonOf("javascript:alert(1)")).toBe("must use https");
    expect(reasonOf("https://user:pass@hooks.example.com/")).toMatch(/user name or password/);
    expect(reasonOf("https://user@hooks.example.com/")).toMatch(/user name or password/);
    expect(reasonOf("not a url")).toBe("must be a valid URL");
    expect(reasonOf("https://[fe80::1%25eth0]/")).toBe("must be a valid URL");
  });

  it("refuses loopback, private, link-local, CGNAT, metadata and reserved IPv4, in every spelling", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://127.1/",
      "https://2130706433/", // 127.0.0.1 as one number
      "https://0x7f.1/",
      "https://0177.0.0.1/", // octal
      "https://0/",
      "https://0.0.0.0/",
      "https://10.1.2.3/",
      "https://172.16.0.1/",
      "https://172.31.255.255/",
      "https://192.168.1.1/",
      "https://169.254.169.254/latest/meta-data/",
      "https://100.64.0.1/",
      "https://100.100.100.200/",
      "https://192.0.0.192/",
      "https://198.18.0.1/",
      "https://224.0.0.1/",
      "https://255.255.255.255/",
      "https://127.0.0.1./",
    ]) {
      expect(reasonOf(url), url).toMatch(/loopback, private/);
    }
    // Neighbours of the blocks are public.
    for (const url of ["https://172.32.0.1/", "https://100.128.0.1/", "https://11.0.0.1/"]) {
      expect(reasonOf(url), url).toBeNull();
    }
  });

  it("refuses loopback, unique-local, link-local, multicast and mapped IPv6", () => {
    for (const url of [
      "https://[::1]/",
      "https://[::]/",
      "https://[0:0:0:0:0:0:0:1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://[::ffff:169.254.169.254]/",
      "https://[::127.0.0.1]/", // IPv4-compatible
      "https://[64:ff9b::10.0.0.1]/",
      "https://[2002:7f00:1::]/", // 6to4 of 127.0.0.1
      "https://[fc00::1]/",
      "https://[fd00:ec2::254]/",
      "https://[fe80::1]/",
      "https://[fec0::1]/",
      "https://[ff02::1]/",
      "https://[2001:db8::1]/",
      "https://[2001::1]/", // Teredo
    ]) {
      expect(reasonOf(url), url).toMatch(/loopback, private/);
    }
  });

  it("refuses local names and single-label hosts", () => {
    for (const url of [
      "https://localhost/",
      "https://LOCALHOST./",
      "https://api.localhost/",
      "https://printer.local/",
      "https://metadata.google.internal/computeMetadata/v1/",
      "https://router.home.arpa/",
    ]) {
      expect(reasonOf(url), url).toBe("must not point at a local or internal host name");
    }
    expect(reasonOf("https://intranet/")).toMatch(/domain name with a dot/);
    expect(reasonOf("https://metadata/")).toMatch(/domain name with a dot/);
  });

  it("allows http and private hosts only as ALERT_WEBHOOK_ALLOW_PRIVATE lists them", () => {
    expect(reasonOf("http://127.0.0.1:4000/hook", "127.0.0.1:4000")).toBeNull();
    expect(reasonOf("http://127.1:4000/hook", "127.0.0.1:4000")).toBeNull();
    expect(reasonOf("http://127.0.0.1:4001/hook", "127.0.0.1:4000")).toMatch(/https/);
    expect(reasonOf("https://127.0.0.1:4001/hook", "127.0.0.1:4000")).toMatch(/loopback/);
    expect(reasonOf("http://localhost:1/x", "example.com, localhost")).toBeNull();
    expect(reasonOf("http://[::1]:8080/x", "[::1]:8080")).toBeNull();
    expect(reasonOf("http://10.0.0.5/x", "10.0.0.5:80")).toBeNull();
    expect(reasonOf("http://10.0.0.5/x", "10.0.0.5:443")).toMatch(/https/);
    expect(reasonOf("http://anything.internal/x", " * ")).toBeNull();
    // Credentials and other schemes stay refused whatever the list says.
    expect(reasonOf("http://u:p@127.0.0.1:4000/", "*")).toMatch(/user name or password/);
    expect(reasonOf("file:///etc/passwd", "*")).toBe("must use https");
    // Junk entries match nothing.
    expect(reasonOf("http://127.0.0.1/", "127.0.0.1:abc, [bad, :80")).toMatch(/https/);
  });
});

/**
 * The interactive API reference at /api-reference (docs/2026-12-02-openapi.md): Scalar's reference
 * over the document the Worker generates at /api/openapi.json. A page of its own (a second Vite
 * entry), so none of it is in the app shell's JavaScript. Everything it needs ships with the page:
 * no fonts, telemetry, proxy or AI agent from Scalar's servers (the pages' CSP would refuse them).
 */
import { createApiReference } from "@scalar/api-reference";
import "@scalar/api-reference/style.css";

createApiReference("#api-reference", {
  url: "/api/openapi.json",
  title: "Parley API",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  hideDarkModeToggle: false,
});

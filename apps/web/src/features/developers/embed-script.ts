/**
 * Loads the embeddable assistant's script from Parley's own origin (the same file tenants' pages
 * load, `/embed/parley-assistant.js`), once; it defines `<parley-assistant>`. A module of its own
 * so component tests can stand in for it.
 */
let loading: Promise<void> | null = null;

export function loadEmbedScript(origin: string): Promise<void> {
  if (customElements.get("parley-assistant")) return Promise.resolve();
  loading ??= new Promise<void>((resolve, reject) => {
    const script = document.createElement("script");
    script.type = "module";
    script.src = `${origin}/embed/parley-assistant.js`;
    script.onload = () => resolve();
    script.onerror = () => {
      loading = null;
      script.remove();
      reject(new Error("The assistant's script did not load"));
    };
    document.head.append(script);
  });
  return loading;
}

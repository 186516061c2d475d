// Placeholder page: shows that the Worker serving this page also answers the API.
const statusOutput = document.querySelector<HTMLOutputElement>("#status");
fetch("/api/health")
  .then((response) => (response.ok ? "ok" : `error ${response.status}`))
  .catch(() => "unreachable")
  .then((text) => {
    if (statusOutput) statusOutput.textContent = text;
  });

export {};

import { Download } from "lucide-react";
import { useState } from "react";
import { Button } from "../../components/ui/button.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { api, type UsageRange } from "../../lib/api.ts";

/** Saves a Blob under a file name through a temporary object URL. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked on the next tick: some browsers start the download after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** Downloads the usage CSV: fetched with the bearer token, since a plain link would carry none. */
export function CsvDownload({ orgId, range }: { orgId: string; range: UsageRange }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function download() {
    setBusy(true);
    setError(null);
    try {
      const blob = await api.usageCsv(orgId, range);
      saveBlob(blob, `usage-${orgId}.csv`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="grid justify-items-end gap-2">
      <Button size="sm" onClick={() => void download()} disabled={busy}>
        <Download aria-hidden="true" />
        {busy ? "Preparing CSV…" : "Download usage CSV"}
      </Button>
      <ErrorNote error={error} />
    </div>
  );
}

/** A size in bytes as people read it: "812 B", "14.2 KB", "3.1 MB" (1 KB = 1024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1).replace(/\.0$/, "")} ${units[unit]}`;
}

/** A content type as a short label: "Markdown", "PDF". */
export function typeLabel(contentType: string): string {
  switch (contentType) {
    case "text/markdown":
      return "Markdown";
    case "text/html":
      return "HTML";
    case "application/pdf":
      return "PDF";
    default:
      return "Text";
  }
}

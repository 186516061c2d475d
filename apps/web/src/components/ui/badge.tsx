import { cva, type VariantProps } from "class-variance-authority";
import type { ComponentProps } from "react";
import { cn } from "../../lib/cn.ts";

const badgeVariants = cva(
  "inline-flex items-center gap-1 whitespace-nowrap rounded-full border px-2 py-0.5 font-medium text-xs",
  {
    variants: {
      tone: {
        neutral: "border-border bg-muted text-muted-foreground",
        info: "border-transparent bg-accent text-accent-foreground",
        success: "border-transparent bg-success/15 text-success",
        // The warning hue is too light for text on its own tint (axe: 3.2:1 in the light theme):
        // the text is the foreground's, the hue marks the badge, as a warning Notice does.
        warning: "border-warning/50 bg-warning/15 text-foreground",
        danger: "border-transparent bg-destructive/15 text-destructive",
      },
    },
    defaultVariants: { tone: "neutral" },
  },
);

export function Badge({
  className,
  tone,
  ...props
}: ComponentProps<"span"> & VariantProps<typeof badgeVariants>) {
  return <span className={cn(badgeVariants({ tone }), className)} {...props} />;
}

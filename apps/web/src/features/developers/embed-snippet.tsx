import type { App } from "@parley/shared";
import { useId, useState } from "react";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "../../components/ui/tabs.tsx";
import { CopyBlock } from "./copy-block.tsx";
import { snippetsFor } from "./snippets.ts";

/** The code that puts this app's assistant on the tenant's pages, for a page and for its server. */
export function EmbedSnippet({ app, parleyUrl }: { app: App; parleyUrl: string }) {
  const id = useId();
  const [tab, setTab] = useState("script");
  const snippets = snippetsFor(app, parleyUrl);
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Embed it"
        description={
          app.allowedOrigins.length === 0
            ? "Add your site's origin under Settings first: the assistant answers only on the pages listed there."
            : `On your pages at ${app.allowedOrigins.join(", ")}, and one endpoint on your server.`
        }
      />
      <CardBody className="grid gap-4">
        <Tabs value={tab} onValueChange={setTab} className="grid min-w-0 gap-4">
          <TabsList aria-label="Snippet">
            <TabsTrigger value="script">Script tag</TabsTrigger>
            <TabsTrigger value="react">React</TabsTrigger>
          </TabsList>
          <TabsContent value="script" className="min-w-0">
            <CopyBlock title="On your page" text={snippets.scriptTag} copyLabel="Copy snippet" />
          </TabsContent>
          <TabsContent value="react" className="min-w-0">
            <CopyBlock title="In your React app" text={snippets.react} copyLabel="Copy component" />
          </TabsContent>
        </Tabs>
        <CopyBlock
          title="On your server, with an API key"
          text={snippets.serverWithKey}
          copyLabel="Copy endpoint"
        />
        {snippets.serverWithSecret ? (
          <CopyBlock
            title="Or with the app secret"
            text={snippets.serverWithSecret}
            copyLabel="Copy endpoint"
          />
        ) : null}
      </CardBody>
    </Card>
  );
}

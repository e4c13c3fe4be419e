// The scripted model of the issue-31 goldens, for real pi 1.6 (see README.md beside this file):
// pi22's replies, and each request's messages (system messages left out) appended as one JSON
// line to the file PI31_CONTEXTS names. tests/regressions/pi31_faux.py does the same for tau.
import { fauxProvider } from "@earendil-works/pi-ai";
import { appendFileSync } from "node:fs";
import { respond } from "../pi22/faux-ext.ts";

export default function (pi: any) {
  const log = process.env.PI31_CONTEXTS;
  const faux = fauxProvider({ api: "faux", provider: "faux", tokenSize: { min: 4, max: 4 } });
  faux.setResponses(
    Array.from({ length: 256 }, () => (context: any) => {
      if (log) appendFileSync(log, JSON.stringify(context.messages.filter((m: any) => m.role !== "system")) + "\n");
      return respond(context);
    }),
  );
  pi.registerProvider(faux.provider);
}

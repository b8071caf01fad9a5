// A tiny harness: reads a few files through the daemon, compacts, prints what it would inject.
//
//   node dist/examples/harness.js [--address unix:///path/daemon.sock] [file ...]
//
// Without --address the daemon is found as every client finds it (POSTCOMPACT_ADDRESS,
// server.json, the default socket) and started when absent (`postcompact serve`).
import { PostcompactClient, PostcompactError, joinAttachments } from "../src/index.js";

async function main(argv: string[]): Promise<number> {
  let address: string | undefined;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--address") address = argv[++i];
    else files.push(argv[i]!);
  }
  if (files.length === 0) files.push("README.md", "package.json", "src/index.ts");

  const client = new PostcompactClient({ address });
  try {
    const session = await client.openSession({ cwd: process.cwd() });
    console.log(`session ${session.id} on ${client.address.address} (${client.address.source})`);

    for (const file of files) {
      const r = await session.readFile(file);
      console.log(`read ${r.path}: ${r.numLines}/${r.totalLines} lines, ~${r.tokens} tokens`);
    }
    const again = await session.readFile(files[0]!);
    console.log(`re-read ${again.path}: ${again.unchanged ? "unchanged stub" : "full text"}`);

    const result = await session.compact();
    console.log(`\ncompaction #${result.compaction}: ${result.attachments.length} attachments`);
    for (const d of result.decisions)
      console.log(`  ${d.subject.replace("SUBJECT_", "").padEnd(5)} ${d.outcome.replace("OUTCOME_", "").padEnd(24)} ${d.name}${d.detail ? ` (${d.detail})` : ""}`);
    // The user message after the summary gets the user-placed blocks, in order; the system
    // message gets the system-placed sections, joined by a blank line.
    const { userBlocks, systemText } = joinAttachments(result.attachments);
    console.log(`\n--- would inject: ${userBlocks.length} user text block(s) ---`);
    for (const block of userBlocks) console.log(block);
    if (systemText) console.log(`\n--- and append to the system message ---\n${systemText}`);
    await session.close();
    return 0;
  } catch (e) {
    if (e instanceof PostcompactError) {
      console.error(`postcompact: ${e.codeName} ${e.reason}: ${e.details}`);
      return 1;
    }
    throw e;
  } finally {
    client.close();
  }
}

process.exitCode = await main(process.argv.slice(2));

/**
 * Reading a SQLite WAL file's frames (https://sqlite.org/fileformat2.html#walformat): a 32-byte
 * header, then frames of a 24-byte header and one page. A frame whose header holds a non-zero
 * database size commits a transaction. Only frames of the log's current generation count: their
 * salts equal the header's.
 */
export interface WalFrame {
  /** Byte offsets of the frame in the file: [offset, end). */
  offset: number;
  end: number;
  commits: boolean;
  page: Buffer;
}

export interface Wal {
  frames: WalFrame[];
  /** Frames that commit a transaction. */
  transactions: number;
  /** The frame that commits the transaction which first wrote `text` into a page, if any. */
  commitFrameOf(text: string): WalFrame | undefined;
}

export function readWal(bytes: Buffer): Wal {
  const frames: WalFrame[] = [];
  if (bytes.length >= 32) {
    const pageSize = bytes.readUInt32BE(8);
    const salt1 = bytes.readUInt32BE(16);
    const salt2 = bytes.readUInt32BE(20);
    for (let at = 32; at + 24 + pageSize <= bytes.length; at += 24 + pageSize) {
      if (bytes.readUInt32BE(at + 8) !== salt1 || bytes.readUInt32BE(at + 12) !== salt2) break;
      frames.push({
        offset: at,
        end: at + 24 + pageSize,
        commits: bytes.readUInt32BE(at + 4) !== 0,
        page: bytes.subarray(at + 24, at + 24 + pageSize),
      });
    }
  }
  return {
    frames,
    transactions: frames.filter((frame) => frame.commits).length,
    commitFrameOf(text) {
      const needle = Buffer.from(text);
      const first = frames.findIndex((frame) => frame.page.includes(needle));
      return first === -1 ? undefined : frames.slice(first).find((frame) => frame.commits);
    },
  };
}

import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64Transformer } from '../common/int64';

/**
 * A plant belongs to the user who created it; ids are chosen by that user, so the key is
 * (owner, id). The owner leads the key: every query is scoped to one owner, and it is the natural
 * shard key on a distributed MySQL-compatible engine.
 */
@Entity({ name: 'plants' })
export class Plant {
  @PrimaryColumn({ type: 'varchar', length: 128 })
  owner: string;

  @PrimaryColumn({ type: 'bigint', transformer: int64Transformer })
  id: bigint;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  tag: string | null;
}

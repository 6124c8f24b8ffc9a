import { Module } from '@nestjs/common';
import { OidcModule } from '../auth/oidc/oidc.module';
import { DocsController } from './docs.controller';
import { DocsService } from './docs.service';

@Module({
  imports: [OidcModule],
  controllers: [DocsController],
  providers: [DocsService],
  exports: [DocsService],
})
export class DocsModule {}

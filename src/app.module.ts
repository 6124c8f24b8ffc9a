import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { JsonBodyMiddleware } from './common/json/json-body.middleware';
import { JsonResponseInterceptor } from './common/json/json-response.interceptor';
import { createValidationPipe } from './common/validation/validation.pipe';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { PlantsModule } from './plants/plants.module';

@Module({
  imports: [AppConfigModule, DatabaseModule, AuthModule, PlantsModule],
  providers: [
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_PIPE, useFactory: createValidationPipe },
    { provide: APP_INTERCEPTOR, useClass: JsonResponseInterceptor },
  ],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonBodyMiddleware).forRoutes('*path');
  }
}
